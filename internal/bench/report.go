package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
)

// Report is what a benchmark measured. Latencies are in milliseconds.
type Report struct {
	Scenario string `json:"scenario"`
	Target   string `json:"target"` // "embedded" or the server's URL
	// User is the server's user the bench wrote to; UserRemoved is true when it was made for
	// the run and forgotten at its end.
	User        string `json:"user,omitempty"`
	UserRemoved bool   `json:"user_removed,omitempty"`
	Store       string `json:"store"` // "sqlite" or "postgres"; "" when a server's store is not known
	Sessions    int    `json:"sessions"`
	Concurrency int    `json:"concurrency"`
	// History is the number of messages each session held before the first operation.
	History int `json:"history"`
	// Streams is the number of run event streams held open while the clients worked.
	Streams        int       `json:"streams,omitempty"`
	StartedAt      time.Time `json:"started_at"`
	PrefillSeconds float64   `json:"prefill_seconds"`
	// Ops counts the operations that succeeded, Errors those that failed; ErrorsByCode counts
	// the failures by carryon error code and ErrorSamples holds the first message of each code.
	Ops          int               `json:"ops"`
	Errors       int               `json:"errors"`
	ErrorsByCode map[string]int    `json:"errors_by_code,omitempty"`
	ErrorSamples map[string]string `json:"error_samples,omitempty"`
	Seconds      float64           `json:"seconds"`
	OpsPerSecond float64           `json:"ops_per_second"`
	Latency      Latency           `json:"latency_ms"`
	// Phases are the parts of an operation (turn: restore and write; continue: restore and
	// context) and, for the mixed scenario, each kind of operation and its parts ("turn write").
	Phases map[string]Latency `json:"phases,omitempty"`
	// Physical is the physical limit measured beside the scenario, nil when it was not.
	Physical *PhysicalResult `json:"physical,omitempty"`
	// RatioToPhysical is the scenario's mean latency over the bare insert's (a turn's target is
	// at most 1.5); RatioToPhysicalP50 the same for the medians.
	RatioToPhysical    float64 `json:"ratio_to_physical,omitempty"`
	RatioToPhysicalP50 float64 `json:"ratio_to_physical_p50,omitempty"`
	Memory             Memory  `json:"memory"`
	// CPU is the processor time of the process serving the clients while they worked, and its
	// share an operation: a figure the machine's other load moves less than the latencies.
	CPU CPU `json:"cpu"`
	// Writes is how many write transactions the store committed while the clients worked (when
	// the target can tell), WritesPerOp that over the operations, failed ones included. For the
	// runs the clients made, Steps is their steps (model calls) in all and WritesPerStep the
	// writes over them: a run's own writes (start, claim, finish, a chat's answer) included.
	Writes        int64   `json:"writes,omitempty"`
	WritesPerOp   float64 `json:"writes_per_op,omitempty"`
	Steps         int     `json:"steps,omitempty"`
	WritesPerStep float64 `json:"writes_per_step,omitempty"`
	// Syncs is how many fsyncs of committed writes the store made while the clients worked (an
	// in-process SQLite store; SQLite's own at checkpoints are not counted), SyncsPerOp that over
	// the operations.
	Syncs      uint64  `json:"syncs,omitempty"`
	SyncsPerOp float64 `json:"syncs_per_op,omitempty"`
	// DatabaseBytes is the size of a SQLite database and its WAL at the end, 0 when not known.
	DatabaseBytes int64 `json:"database_bytes,omitempty"`
	// LoadAverage and LoadAverageEnd are the machine's 1, 5 and 15 minute load averages at the
	// start and at the end (Linux; empty elsewhere).
	LoadAverage    []float64 `json:"load_average,omitempty"`
	LoadAverageEnd []float64 `json:"load_average_end,omitempty"`
}

// Latency are the percentiles of a set of latencies, in milliseconds.
type Latency struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// latencyOf returns the percentiles of ds (nearest rank), which it sorts.
func latencyOf(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	slices.Sort(ds)
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	rank := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(ds)))) - 1
		return ms(ds[max(i, 0)])
	}
	return Latency{N: len(ds), Mean: ms(sum / time.Duration(len(ds))), P50: rank(0.50), P95: rank(0.95), P99: rank(0.99), Max: ms(ds[len(ds)-1])}
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// recorder collects one client's latencies by name ("" is the whole operation) and failures.
type recorder struct {
	lat     map[string][]time.Duration
	errs    map[string]int
	samples map[string]string
}

func newRecorder() *recorder {
	return &recorder{lat: map[string][]time.Duration{}, errs: map[string]int{}, samples: map[string]string{}}
}

func (r *recorder) add(name string, d time.Duration) { r.lat[name] = append(r.lat[name], d) }

func (r *recorder) fail(err error) {
	code := carryon.ErrorCode(err)
	r.errs[code]++
	if _, ok := r.samples[code]; !ok {
		r.samples[code] = err.Error()
	}
}

func (r *recorder) merge(o *recorder) {
	for k, v := range o.lat {
		r.lat[k] = append(r.lat[k], v...)
	}
	for k, v := range o.errs {
		r.errs[k] += v
		if _, ok := r.samples[k]; !ok {
			r.samples[k] = o.samples[k]
		}
	}
}

// fill sets the report's counts and percentiles from what the clients recorded in elapsed.
func (rep *Report) fill(r *recorder, elapsed time.Duration) {
	rep.Ops = len(r.lat[""])
	for _, n := range r.errs {
		rep.Errors += n
	}
	if rep.Errors > 0 {
		rep.ErrorsByCode, rep.ErrorSamples = r.errs, r.samples
	}
	rep.Seconds = elapsed.Seconds()
	if elapsed > 0 {
		rep.OpsPerSecond = math.Round(float64(rep.Ops)/elapsed.Seconds()*10) / 10
	}
	rep.Latency = latencyOf(r.lat[""])
	for name, ds := range r.lat {
		if name == "" {
			continue
		}
		if rep.Phases == nil {
			rep.Phases = map[string]Latency{}
		}
		rep.Phases[name] = latencyOf(ds)
	}
}

// setWrites adds the n write transactions the operations committed and, when they made runs, the
// steps of those runs (read after the measurement, outside its time).
func (rep *Report) setWrites(ctx context.Context, t Target, n int64, runIDs []string) {
	rep.Writes = n
	if ops := rep.Ops + rep.Errors; ops > 0 {
		rep.WritesPerOp = math.Round(float64(n)/float64(ops)*100) / 100
	}
	for _, id := range runIDs {
		if r, err := t.Runs.GetRun(ctx, id); err == nil {
			rep.Steps += r.Step
		}
	}
	if rep.Steps > 0 {
		rep.WritesPerStep = math.Round(float64(n)/float64(rep.Steps)*100) / 100
	}
}

// setSyncs adds the n fsyncs of committed writes the operations cost.
func (rep *Report) setSyncs(n uint64) {
	rep.Syncs = n
	if ops := rep.Ops + rep.Errors; ops > 0 {
		rep.SyncsPerOp = math.Round(float64(n)/float64(ops)*100) / 100
	}
}

// setPhysical adds the physical limit measured beside the scenario, and the ratios to it.
func (rep *Report) setPhysical(p *PhysicalResult) {
	rep.Physical = p
	if p == nil || p.Latency.Mean == 0 || p.Latency.P50 == 0 {
		return
	}
	rep.RatioToPhysical = math.Round(rep.Latency.Mean/p.Latency.Mean*100) / 100
	rep.RatioToPhysicalP50 = math.Round(rep.Latency.P50/p.Latency.P50*100) / 100
}

// WriteText writes the report for a person to read.
func (rep *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "carryon bench %s on %s", rep.Scenario, rep.Target)
	if rep.Store != "" {
		fmt.Fprintf(&b, " (%s)", rep.Store)
	}
	fmt.Fprintf(&b, ", %s\n", rep.StartedAt.Format(time.RFC3339))
	if rep.User != "" {
		what := "kept"
		if rep.UserRemoved {
			what = "made for the run and removed at its end"
		}
		fmt.Fprintf(&b, "wrote to user %s (%s)\n", rep.User, what)
	}
	fmt.Fprintf(&b, "%d sessions of %d messages (prefilled in %.1f s), %d clients", rep.Sessions, rep.History, rep.PrefillSeconds, rep.Concurrency)
	if rep.Streams > 0 {
		fmt.Fprintf(&b, ", %d open event streams", rep.Streams)
	}
	if len(rep.LoadAverage) == 3 {
		fmt.Fprintf(&b, ", load average %.2f %.2f %.2f", rep.LoadAverage[0], rep.LoadAverage[1], rep.LoadAverage[2])
		if len(rep.LoadAverageEnd) == 3 {
			fmt.Fprintf(&b, " → %.2f %.2f %.2f", rep.LoadAverageEnd[0], rep.LoadAverageEnd[1], rep.LoadAverageEnd[2])
		}
	}
	fmt.Fprintf(&b, "\n\n%d ops in %.2f s: %.1f ops/s, %d errors\n", rep.Ops, rep.Seconds, rep.OpsPerSecond, rep.Errors)
	codes := make([]string, 0, len(rep.ErrorsByCode))
	for c := range rep.ErrorsByCode {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	for _, c := range codes {
		fmt.Fprintf(&b, "  %d × %s: %s\n", rep.ErrorsByCode[c], c, rep.ErrorSamples[c])
	}
	fmt.Fprintf(&b, "%-18s %7s %9s %9s %9s %9s %9s\n", "", "n", "mean ms", "p50 ms", "p95 ms", "p99 ms", "max ms")
	row := func(name string, l Latency) {
		fmt.Fprintf(&b, "%-18s %7d %9.3f %9.3f %9.3f %9.3f %9.3f\n", name, l.N, l.Mean, l.P50, l.P95, l.P99, l.Max)
	}
	row(rep.Scenario, rep.Latency)
	names := make([]string, 0, len(rep.Phases))
	for n := range rep.Phases {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(a, b) })
	for _, n := range names {
		row("  "+n, rep.Phases[n])
	}
	if p := rep.Physical; p != nil {
		row("bare insert", p.Latency)
	}
	if p := rep.Physical; p != nil {
		fmt.Fprintf(&b, "physical limit: %s, %.1f inserts/s; %s is %.2f× a bare insert (mean), %.2f× (p50)\n",
			p.Method, p.OpsPerSecond, rep.Scenario, rep.RatioToPhysical, rep.RatioToPhysicalP50)
	}
	if c := rep.CPU; c.Source != "" {
		fmt.Fprintf(&b, "cpu (%s): %.3f s, %.1f µs an op\n", c.Source, c.Seconds, c.PerOpMicros)
	}
	if rep.Writes > 0 {
		fmt.Fprintf(&b, "store writes: %d committed, %.2f an op", rep.Writes, rep.WritesPerOp)
		if rep.Steps > 0 {
			fmt.Fprintf(&b, ", %.2f a step (%d steps in %d runs, the runs' own writes included)", rep.WritesPerStep, rep.Steps, rep.Ops)
		}
		fmt.Fprintln(&b)
	}
	if rep.Syncs > 0 {
		fmt.Fprintf(&b, "fsyncs of commits: %d, %.2f an op\n", rep.Syncs, rep.SyncsPerOp)
	}
	m := rep.Memory
	switch {
	case m.Source == "":
		fmt.Fprintln(&b, "peak memory: not measured")
	default:
		fmt.Fprintf(&b, "peak memory (%s): heap %s, RSS %s\n", m.Source, mib(m.PeakHeapBytes), mib(m.PeakRSSBytes))
	}
	if rep.DatabaseBytes > 0 {
		fmt.Fprintf(&b, "database: %s with its WAL\n", mib(uint64(rep.DatabaseBytes)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mib(n uint64) string {
	if n == 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
