package telemetry

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model"
)

// metrics are the Prometheus metrics of runs, model calls, tools, sweeps and write conflicts.
// Every label is bounded: agent profiles, run and action statuses, effect classes, tool names
// (the agents file's tools and its MCP servers' tools; client tools never run here), providers
// and models of the agents file, error codes. No session, user or run id is a label.
type metrics struct {
	runsStarted   *prometheus.CounterVec
	runsFinished  *prometheus.CounterVec
	runDuration   *prometheus.HistogramVec
	queueWait     *prometheus.HistogramVec
	takeovers     prometheus.Counter
	modelDuration *prometheus.HistogramVec
	tokens        *prometheus.HistogramVec
	toolCalls     *prometheus.CounterVec
	toolDuration  *prometheus.HistogramVec
	sweeps        *prometheus.CounterVec
	purged        *prometheus.CounterVec
	replays       *prometheus.CounterVec
	conflicts     *prometheus.CounterVec
	schedules     *scheduleMetrics
	spend         *spendMetrics
}

// durationBuckets are the bucket bounds of the duration histograms, in seconds (the GenAI
// conventions' advice for gen_ai.client.operation.duration).
var durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}

// tokenBuckets are the bucket bounds of gen_ai.client.token.usage, as the conventions advise.
var tokenBuckets = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}

func newMetrics(reg prometheus.Registerer) *metrics {
	genAI := []string{"gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model", "gen_ai_response_model"}
	m := &metrics{
		runsStarted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carryon_runs_started_total",
			Help: "Runs a runner of this instance started (their first attempt), by agent profile.",
		}, []string{"agent"}),
		runsFinished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carryon_runs_finished_total",
			Help: "Run attempts that ended on this instance, by agent profile and how they ended (a run status; released: handed back at shutdown or lost to another runner).",
		}, []string{"agent", "status"}),
		runDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "carryon_run_duration_seconds",
			Help:    "Time a runner spent on one attempt of a run, from taking it to its end, by agent profile and how it ended.",
			Buckets: durationBuckets,
		}, []string{"agent", "status"}),
		queueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "carryon_run_queue_wait_seconds",
			Help:    "Time from a run's creation to its first attempt, by agent profile.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900},
		}, []string{"agent"}),
		takeovers: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "carryon_lease_takeovers_total",
			Help: "Runs this instance took over because their runner's lease ran out (a crashed or paused runner).",
		}),
		modelDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gen_ai_client_operation_duration_seconds",
			Help:    "Duration of model calls (gen_ai.client.operation.duration), by operation, provider, requested and answering model, and error type (empty on success).",
			Buckets: durationBuckets,
		}, append(genAI, "error_type")),
		tokens: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gen_ai_client_token_usage",
			Help:    "Tokens used per model call (gen_ai.client.token.usage), by operation, provider, requested and answering model, and token type (input, output).",
			Buckets: tokenBuckets,
		}, append(genAI, "gen_ai_token_type")),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carryon_tool_calls_total",
			Help: "Journaled tool calls executed on this instance, by tool, effect class and outcome (succeeded, failed, interrupted).",
		}, []string{"tool", "effect", "status"}),
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "carryon_tool_call_duration_seconds",
			Help:    "Duration of journaled tool calls, by tool and effect class.",
			Buckets: durationBuckets,
		}, []string{"tool", "effect"}),
		sweeps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carryon_sweeps_total",
			Help: "Sweeps run, by sweeper (sessions, long_term) and outcome (ok, error).",
		}, []string{"sweeper", "outcome"}),
		purged: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carryon_purged_total",
			Help: "Rows the sweepers deleted, by kind (sessions, request_ids, long_term_items).",
		}, []string{"kind"}),
		replays: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carryon_request_id_replays_total",
			Help: "Writes answered from a stored answer because their request id was seen before, by front door (http, mcp).",
		}, []string{"front"}),
		conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carryon_write_conflicts_total",
			Help: "Writes refused for a conflict, by error code (version_conflict, request_in_flight, idempotency_key_reused, session_busy, version_required, conflict).",
		}, []string{"code"}),
	}
	for _, c := range []prometheus.Collector{m.runsStarted, m.runsFinished, m.runDuration, m.queueWait, m.takeovers,
		m.modelDuration, m.tokens, m.toolCalls, m.toolDuration, m.sweeps, m.purged, m.replays, m.conflicts} {
		reg.MustRegister(c)
	}
	m.schedules = newScheduleMetrics(reg)
	m.spend = newSpendMetrics(reg)
	// The series of known label values exist from the start (at 0), so that rates and alerts
	// see them before the first event.
	for _, sw := range []string{"sessions", "long_term"} {
		for _, o := range []string{"ok", "error"} {
			m.sweeps.WithLabelValues(sw, o)
		}
	}
	for _, k := range []string{"sessions", "request_ids", "long_term_items"} {
		m.purged.WithLabelValues(k)
	}
	for _, front := range []string{"http", "mcp"} {
		m.replays.WithLabelValues(front)
	}
	for code := range conflictCodes {
		m.conflicts.WithLabelValues(code)
	}
	return m
}

func (m *metrics) runEnded(agent, status string, d time.Duration) {
	if m == nil {
		return
	}
	m.runsFinished.WithLabelValues(agent, status).Inc()
	m.runDuration.WithLabelValues(agent, status).Observe(d.Seconds())
}

// modelCall records a model call of operation op (chat or embeddings; an embeddings call has
// no output tokens).
func (m *metrics) modelCall(op, provider, reqModel, respModel, errType string, d time.Duration, u model.Usage) {
	if m == nil {
		return
	}
	m.modelDuration.WithLabelValues(op, provider, reqModel, respModel, errType).Observe(d.Seconds())
	if errType != "" {
		return
	}
	m.tokens.WithLabelValues(op, provider, reqModel, respModel, "input").Observe(float64(u.InputTokens))
	if op == "chat" {
		m.tokens.WithLabelValues(op, provider, reqModel, respModel, "output").Observe(float64(u.OutputTokens))
	}
}

func (m *metrics) toolCall(tool, effect, status string, d time.Duration) {
	if m == nil {
		return
	}
	m.toolCalls.WithLabelValues(tool, effect, status).Inc()
	m.toolDuration.WithLabelValues(tool, effect).Observe(d.Seconds())
}

// RunClaimed reports that a runner of this instance took run: its first attempt (a start, with
// the time it waited in the queue) or a takeover of a run whose runner's lease ran out.
func (t *Telemetry) RunClaimed(run *carryon.Run, takeover bool) {
	if t == nil || t.metrics == nil {
		return
	}
	if takeover {
		t.metrics.takeovers.Inc()
	}
	if run.Attempt == 1 {
		t.metrics.runsStarted.WithLabelValues(run.Agent).Inc()
		if run.StartedAt != nil {
			t.metrics.queueWait.WithLabelValues(run.Agent).Observe(run.StartedAt.Sub(run.CreatedAt).Seconds())
		}
	}
}

// RunEnded reports a run that ended without a runner's attempt (cancelled while queued or
// waiting, failed before it could start, parked, or timed out waiting for tool outputs).
func (t *Telemetry) RunEnded(agent string, status carryon.RunStatus) {
	if t == nil || t.metrics == nil {
		return
	}
	t.metrics.runsFinished.WithLabelValues(agent, string(status)).Inc()
}

// Swept reports one sweep of sweeper ("sessions", "long_term") and the rows it deleted by kind.
func (t *Telemetry) Swept(sweeper string, err error, deleted map[string]int64) {
	if t == nil || t.metrics == nil || errors.Is(err, context.Canceled) {
		return
	}
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	t.metrics.sweeps.WithLabelValues(sweeper, outcome).Inc()
	t.Purged(deleted)
}

// Purged counts rows deleted by kind (a sweep's, or another purge's such as forgetting a user).
func (t *Telemetry) Purged(deleted map[string]int64) {
	if t == nil || t.metrics == nil {
		return
	}
	for kind, n := range deleted {
		if n > 0 {
			t.metrics.purged.WithLabelValues(kind).Add(float64(n))
		}
	}
}

// conflictCodes are the error codes counted as write conflicts.
var conflictCodes = map[string]bool{
	carryon.EVERSION: true, carryon.EINFLIGHT: true, carryon.EKEYREUSED: true, carryon.EBUSY: true,
	carryon.EVERSIONNEEDED: true, carryon.ECONFLICT: true,
}

// Write reports how a write through a front door ended: replayed from its request id, or
// refused with an error code (only conflicts are counted).
func (t *Telemetry) Write(front string, replayed bool, code string) {
	if t == nil || t.metrics == nil {
		return
	}
	if replayed {
		t.metrics.replays.WithLabelValues(front).Inc()
	}
	if conflictCodes[code] {
		t.metrics.conflicts.WithLabelValues(code).Inc()
	}
}

// ActiveRuns is what a gauge of active runs reads at each scrape: the number of runs in each
// active state across the whole database (every instance's).
type ActiveRuns func(ctx context.Context) (map[carryon.RunStatus]int64, error)

// RegisterActiveRuns registers the gauges carryon_runs_active{status} and
// carryon_approvals_waiting, read from count at each scrape (a bounded query over the active
// runs' index; a scrape that cannot read it leaves them out rather than failing).
func RegisterActiveRuns(reg prometheus.Registerer, count ActiveRuns) {
	reg.MustRegister(activeRuns{count: count,
		active:    prometheus.NewDesc("carryon_runs_active", "Runs in each active state (queued, running, waiting_approval, requires_action), across all instances.", []string{"status"}, nil),
		approvals: prometheus.NewDesc("carryon_approvals_waiting", "Runs waiting for a user's decision on an action (waiting_approval), across all instances.", nil, nil),
	})
}

type activeRuns struct {
	count             ActiveRuns
	active, approvals *prometheus.Desc
}

func (a activeRuns) Describe(ch chan<- *prometheus.Desc) { ch <- a.active; ch <- a.approvals }

func (a activeRuns) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := a.count(ctx)
	if err != nil {
		return // the database did not answer: the gauges are absent from this scrape
	}
	for _, s := range []carryon.RunStatus{carryon.RunQueued, carryon.RunRunning, carryon.RunWaitingApproval, carryon.RunRequiresAction} {
		ch <- prometheus.MustNewConstMetric(a.active, prometheus.GaugeValue, float64(counts[s]), string(s))
	}
	ch <- prometheus.MustNewConstMetric(a.approvals, prometheus.GaugeValue, float64(counts[carryon.RunWaitingApproval]))
}
