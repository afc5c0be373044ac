package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/carryon-hub/carryon"
)

// spendMetrics count what model calls spent, as recorded with their steps, and the runs budgets
// stopped. The model label takes the agents file's models only (a run's model is its profile's);
// no user, session or run is a label.
type spendMetrics struct {
	tokens *prometheus.CounterVec
	usd    *prometheus.CounterVec
	stops  *prometheus.CounterVec
}

func newSpendMetrics(reg prometheus.Registerer) *spendMetrics {
	m := &spendMetrics{
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carryon_spend_tokens_total",
			Help: "Tokens of model calls recorded as spend on this instance (budgets count them), by model and token type (input, output).",
		}, []string{"model", "type"}),
		usd: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carryon_spend_usd_total",
			Help: "Money of model calls recorded as spend on this instance, in USD at the agents file's prices, by model.",
		}, []string{"model"}),
		stops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carryon_budget_stops_total",
			Help: "Runs stopped at a step boundary because a budget was spent, by budget (session, user_day, user_month) and what the run did (pause, fail).",
		}, []string{"scope", "on_exceed"}),
	}
	reg.MustRegister(m.tokens, m.usd, m.stops)
	for _, s := range []string{carryon.BudgetScopeSession, carryon.BudgetScopeUserDay, carryon.BudgetScopeUserMonth} {
		for _, a := range []carryon.BudgetAction{carryon.BudgetPause, carryon.BudgetFail} {
			m.stops.WithLabelValues(s, string(a))
		}
	}
	return m
}

// Spent counts one model call's spend, once the step that records it committed.
func (t *Telemetry) Spent(c carryon.ModelCall) {
	if t == nil || t.metrics == nil || t.metrics.spend == nil {
		return
	}
	m := t.metrics.spend
	m.tokens.WithLabelValues(c.Model, "input").Add(float64(c.InputTokens))
	m.tokens.WithLabelValues(c.Model, "output").Add(float64(c.OutputTokens))
	m.usd.WithLabelValues(c.Model).Add(c.Cost.USD())
}

// BudgetStopped counts a run a budget stopped.
func (t *Telemetry) BudgetStopped(b *carryon.BudgetStop) {
	if t == nil || t.metrics == nil || t.metrics.spend == nil {
		return
	}
	t.metrics.spend.stops.WithLabelValues(b.Scope, string(b.OnExceed)).Inc()
}
