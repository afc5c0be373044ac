package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/carryon-hub/carryon"
)

// scheduleMetrics count the scheduler's ticks.
type scheduleMetrics struct {
	ticks *prometheus.CounterVec
	late  prometheus.Counter
}

func newScheduleMetrics(reg prometheus.Registerer) *scheduleMetrics {
	m := &scheduleMetrics{
		ticks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carryon_schedule_ticks_total",
			Help: "Schedule ticks this instance claimed, by outcome (fired, skipped_overlap, skipped_queued, missed, session_closed, failed).",
		}, []string{"outcome"}),
		late: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "carryon_schedule_late_ticks_total",
			Help: "Schedule ticks claimed later than the lateness bound (a scheduler down or behind), including the missed ticks a claim stepped over.",
		}),
	}
	reg.MustRegister(m.ticks, m.late)
	for _, o := range []string{carryon.TickFired, carryon.TickSkipOverlap, carryon.TickSkipQueued, carryon.TickMissed, carryon.TickSessionClosed, carryon.TickFailed} {
		m.ticks.WithLabelValues(o)
	}
	return m
}

// ScheduleTick counts one tick a scheduler claimed, what it did, and the late ticks among it and
// the ticks it stepped over.
func (t *Telemetry) ScheduleTick(outcome string, late int) {
	if t == nil || t.metrics == nil || t.metrics.schedules == nil {
		return
	}
	t.metrics.schedules.ticks.WithLabelValues(outcome).Inc()
	if late > 0 {
		t.metrics.schedules.late.Add(float64(late))
	}
}
