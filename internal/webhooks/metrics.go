package webhooks

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/carryon-hub/carryon/internal/store"
)

// Outcomes of a delivery attempt, the outcome label of carryon_webhook_attempts_total.
const (
	OutcomeDelivered = "delivered"
	OutcomeRetry     = "retry"
	OutcomeFailed    = "failed"
)

// registerMetrics registers the worker's metrics with reg: the attempts of this instance by
// outcome, and the outbox depth (pending deliveries, across instances) read at each scrape.
func registerMetrics(reg prometheus.Registerer, st store.Store) *prometheus.CounterVec {
	attempts := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "carryon_webhook_attempts_total",
		Help: "Webhook delivery attempts of this instance by outcome: delivered (2xx), retry (failed, retried later), failed (failed, retries exhausted).",
	}, []string{"outcome"})
	for _, o := range []string{OutcomeDelivered, OutcomeRetry, OutcomeFailed} {
		attempts.WithLabelValues(o)
	}
	reg.MustRegister(attempts, outbox{st: st, desc: prometheus.NewDesc("carryon_webhook_outbox_depth",
		"Webhook deliveries pending (queued or being retried), across all instances.", nil, nil)})
	return attempts
}

type outbox struct {
	st   store.Store
	desc *prometheus.Desc
}

func (o outbox) Describe(ch chan<- *prometheus.Desc) { ch <- o.desc }

func (o outbox) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var n int64
	err := o.st.Read(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.OutboxDepth(ctx)
		return err
	})
	if err != nil {
		return // the database did not answer: the gauge is absent from this scrape
	}
	ch <- prometheus.MustNewConstMetric(o.desc, prometheus.GaugeValue, float64(n))
}
