// Package bench is carryon's load generator: it fills sessions with history, then drives one
// scenario (a turn, an append, a continue, a run, or a mix of them) from concurrent clients
// against the service interfaces, in-process (package hub) or over HTTP (client.Client), and
// reports throughput, latency percentiles, errors and peak memory. Beside the scenario it
// measures the physical limit of the same database: a bare single-row INSERT with its own
// fsync'd commit (Config.Physical).
//
// It owns no rule and no SQL of carryon's: every write goes through the same service calls a
// client makes, so what it measures is what a client gets.
package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/carryon-hub/carryon"
)

// The scenarios.
const (
	// Turn is the peers' workload: restore the session (its working memory and last messages),
	// then append a user and an assistant message and set goal and next_action in the working
	// memory in one write, with the version read and a request id.
	Turn = "turn"
	// Append appends one user message with a request id.
	Append = "append"
	// Continue restores the session and builds the model's context for it.
	Continue = "continue"
	// RunScenario is a full run on the server's model (the offline scripted model by default):
	// the chat short path, which waits for the run to end.
	RunScenario = "run"
	// Mixed picks each operation at random: 40% turn, 30% append, 20% continue, 10% run.
	Mixed = "mixed"
)

// Scenarios are the scenario names, in the order the help lists them.
var Scenarios = []string{Turn, Append, Continue, RunScenario, Mixed}

// Target is what the clients call: the session and run services of a hub opened in-process, or
// the HTTP client of a server. The context given to Run carries the user they act for.
type Target struct {
	Sessions carryon.SessionService
	Runs     carryon.RunService
	// Context builds what the model would be sent for a session now (the continue scenario).
	Context func(ctx context.Context, sessionID string) error
	// Memory, when set, samples the memory of the process that serves the target (Self for an
	// in-process hub; a sampler of a server's /metrics for a server).
	Memory func(ctx context.Context) (Memory, error)
	// MemoryEvery is how often Memory is sampled (default 100 ms). A server's /metrics costs it
	// about 2 ms of CPU a scrape, which a sample every 100 ms would add to the CPU an operation
	// costs; the server's target samples every second.
	MemoryEvery time.Duration
	// Writes, when set, returns how many write transactions the target's store has committed so
	// far (an in-process hub's instrumented store, a server's /metrics), to report the writes an
	// operation costs.
	Writes func(ctx context.Context) (int64, error)
	// CPU, when set, returns the processor time (user and system) the process serving the
	// target has used so far (SelfCPU in process; a server's process_cpu_seconds_total), and
	// CPUSource says which ("process" or "metrics").
	CPU       func(ctx context.Context) (time.Duration, error)
	CPUSource string
	// Syncs, when set, returns how many fsyncs of committed writes the target's store has made
	// so far (an in-process SQLite store), to report the fsyncs an operation costs.
	Syncs func() uint64
}

// Config is one benchmark.
type Config struct {
	Scenario string
	// Sessions is how many sessions the clients share out (each client works on its own ones);
	// at least Concurrency.
	Sessions int
	// Concurrency is the number of clients working at once.
	Concurrency int
	// Count is the number of operations in all; without it the clients work for Duration.
	Count    int
	Duration time.Duration
	// History is the number of messages each session holds before the measurement.
	History int
	// Streams is a number of run event streams held open while the clients work (a server's
	// memory with many live streams); they follow one run, which must last: on the scripted
	// model, start the server with --scripted-delay.
	Streams int
	// RunMessage is the user's message of each run (the run scenario; default "continue the
	// task").
	RunMessage string
	// Physical says where to measure the physical limit beside the scenario; none without a DSN.
	Physical PhysicalConfig
	// Progress, when set, is told how far the prefill and the measurement are, every few
	// hundred milliseconds and once at the end of each.
	Progress func(Progress)
	// Profile, when set, is started right before the clients start and stopped right after they
	// stop (a CPU profile of the measurement alone).
	Profile func() (stop func(), err error)
}

// PhysicalConfig is the physical limit to measure beside the scenario: N bare inserts on the
// database DSN names (a file of its own beside a SQLite database, a table of its own in a
// PostgreSQL one), half right before the clients start and half right after
// they stop, so that a change of the machine's load during the run weighs on both sides.
type PhysicalConfig struct {
	DSN, Synchronous string
	N                int
}

// Progress is how far a benchmark is.
type Progress struct {
	Phase          string // "prefill" or the scenario
	Done, Total    int    // operations (or sessions, in the prefill); Total 0 when timed
	Elapsed, Limit time.Duration
	Errors         int
}

// Run fills the sessions, then runs the scenario between the two halves of the physical limit
// and returns the report. A failure of an operation is counted in the report, not returned; Run
// returns an error for a configuration it cannot run, or a prefill or physical limit that fails.
func Run(ctx context.Context, cfg Config, t Target) (*Report, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	rep := &Report{Scenario: cfg.Scenario, Sessions: cfg.Sessions, Concurrency: cfg.Concurrency, History: cfg.History,
		StartedAt: time.Now().UTC(), LoadAverage: LoadAverage()}
	mem := newSampler(t.Memory, t.MemoryEvery)
	defer mem.stop()
	mem.start(ctx)
	start := time.Now()
	ids, err := prefill(ctx, cfg, t)
	if err != nil {
		return nil, err
	}
	rep.PrefillSeconds = time.Since(start).Seconds()
	stopStreams := func() {}
	if cfg.Streams > 0 {
		if stopStreams, err = openStreams(ctx, t, cfg.Streams); err != nil {
			return nil, err
		}
		rep.Streams = cfg.Streams
	}
	var phys physicalRun
	p := cfg.Physical
	if p.DSN != "" && p.N > 0 {
		if err := phys.run(ctx, p.DSN, p.Synchronous, p.N/2); err != nil {
			stopStreams()
			return nil, err
		}
	}
	w0, werr := writes(ctx, t)
	s0 := syncs(t)
	stopProfile := func() {}
	if cfg.Profile != nil {
		if stopProfile, err = cfg.Profile(); err != nil {
			stopStreams()
			return nil, err
		}
	}
	c0, cerr := cpuOf(ctx, t)
	runIDs := measure(ctx, cfg, t, ids, rep)
	stopProfile()
	if c1, err := cpuOf(ctx, t); cerr == nil && err == nil && t.CPU != nil {
		rep.setCPU(t.CPUSource, c1-c0)
	}
	if w1, err := writes(ctx, t); werr == nil && err == nil && t.Writes != nil {
		rep.setWrites(ctx, t, w1-w0, runIDs)
	}
	if t.Syncs != nil {
		rep.setSyncs(syncs(t) - s0)
	}
	rep.Memory = mem.peak(ctx) // with the streams still open
	stopStreams()
	if p.DSN != "" && p.N > 0 {
		// Interrupted (ctx done), the report keeps what was measured: the first half.
		if ctx.Err() == nil {
			if err := phys.run(ctx, p.DSN, p.Synchronous, p.N-p.N/2); err != nil {
				return nil, err
			}
		}
		rep.setPhysical(phys.result())
	}
	rep.LoadAverageEnd = LoadAverage()
	return rep, nil
}

// Check reports a configuration Run cannot run.
func (cfg *Config) Check() error {
	known := false
	for _, s := range Scenarios {
		known = known || s == cfg.Scenario
	}
	switch {
	case !known:
		return fmt.Errorf("unknown scenario %q", cfg.Scenario)
	case cfg.Concurrency < 1:
		return fmt.Errorf("the concurrency must be 1 or more")
	case cfg.Sessions < cfg.Concurrency:
		return fmt.Errorf("%d sessions for %d clients: each client works on sessions of its own, so give at least as many sessions", cfg.Sessions, cfg.Concurrency)
	case cfg.Count < 0 || cfg.History < 0 || cfg.Duration < 0 || cfg.Streams < 0 || cfg.Physical.N < 0:
		return fmt.Errorf("the count, the duration, the history, the streams and the physical inserts cannot be negative")
	case cfg.Count == 0 && cfg.Duration == 0:
		return fmt.Errorf("give a count or a duration")
	}
	return nil
}

// writes is t.Writes, or 0 without it.
func writes(ctx context.Context, t Target) (int64, error) {
	if t.Writes == nil {
		return 0, nil
	}
	return t.Writes(ctx)
}

// syncs is t.Syncs, or 0 without it.
func syncs(t Target) uint64 {
	if t.Syncs == nil {
		return 0
	}
	return t.Syncs()
}

// measure runs the clients and fills rep with what they saw; it returns the ids of the runs they
// made.
func measure(ctx context.Context, cfg Config, t Target, ids []string, rep *Report) []string {
	var (
		claimed atomic.Int64
		done    atomic.Int64
		failed  atomic.Int64
		wg      sync.WaitGroup
	)
	clients := make([]*client, cfg.Concurrency)
	start := time.Now()
	deadline := start.Add(cfg.Duration)
	more := func() bool {
		if ctx.Err() != nil {
			return false
		}
		if cfg.Count > 0 {
			return claimed.Add(1) <= int64(cfg.Count)
		}
		return time.Now().Before(deadline)
	}
	stopProgress := progressTicker(cfg, cfg.Scenario, start, func() (int, int) { return int(done.Load()), int(failed.Load()) })
	for i := range clients {
		c := &client{t: t, rec: newRecorder(), rng: rand.New(rand.NewPCG(uint64(i), 42)), id: i, msg: cfg.RunMessage}
		if c.msg == "" {
			c.msg = "continue the task"
		}
		for j := i; j < len(ids); j += cfg.Concurrency {
			c.sessions = append(c.sessions, ids[j])
		}
		clients[i] = c
		wg.Go(func() {
			for more() {
				if err := c.op(ctx, cfg.Scenario); err != nil && ctx.Err() == nil {
					c.rec.fail(err)
					failed.Add(1)
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	stopProgress(int(done.Load()), int(failed.Load()))
	all := newRecorder()
	var runIDs []string
	for _, c := range clients {
		all.merge(c.rec)
		runIDs = append(runIDs, c.runs...)
	}
	rep.fill(all, elapsed)
	return runIDs
}

// client is one of the concurrent clients: it works on its own sessions, round robin.
type client struct {
	t        Target
	id       int
	sessions []string
	next     int
	n        int
	rng      *rand.Rand
	rec      *recorder
	phase    string   // the prefix of the phases' names: the kind of operation, in the mixed scenario
	runs     []string // the runs it made
	msg      string   // the message of its runs
}

// op runs one operation of the scenario and records its latency (and its phases').
func (c *client) op(ctx context.Context, scenario string) error {
	sid := c.sessions[c.next%len(c.sessions)]
	c.next++
	c.n++
	kind := scenario
	if kind == Mixed {
		switch p := c.rng.IntN(10); {
		case p < 4:
			kind = Turn
		case p < 7:
			kind = Append
		case p < 9:
			kind = Continue
		default:
			kind = RunScenario
		}
	}
	c.phase = ""
	if scenario == Mixed {
		c.phase = kind + " "
	}
	start := time.Now()
	err := c.do(ctx, kind, sid)
	if err != nil {
		return err
	}
	d := time.Since(start)
	c.rec.add("", d)
	if scenario == Mixed {
		c.rec.add(kind, d)
	}
	return nil
}

// do runs one operation of kind on session sid.
func (c *client) do(ctx context.Context, kind, sid string) error {
	rid := "bench-" + strconv.Itoa(c.id) + "-" + strconv.Itoa(c.n) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	switch kind {
	case Turn:
		t0 := time.Now()
		view, err := c.t.Sessions.Get(ctx, sid, carryon.GetOptions{})
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		t1 := time.Now()
		n := view.MessageCount
		_, err = c.t.Sessions.AppendMessages(ctx, sid, carryon.AppendInput{
			Messages: []carryon.NewMessage{
				{Role: carryon.RoleUser, Content: fmt.Sprintf("turn %d: please continue the investigation where we stopped", n/2+1)},
				{Role: carryon.RoleAssistant, Content: fmt.Sprintf("step %d: checked the log, next I will look at the config file", n+1)},
			},
			WorkingMemoryPatch: fmt.Appendf(nil, `{"goal":"find why the nightly job fails","next_action":"inspect item %d"}`, n+1),
			WriteOptions:       carryon.WriteOptions{ExpectedVersion: carryon.Ptr(view.Version), RequestID: rid},
		})
		if err != nil {
			return fmt.Errorf("append: %w", err)
		}
		c.rec.add(c.phase+"restore", t1.Sub(t0))
		c.rec.add(c.phase+"write", time.Since(t1))
		return nil
	case Append:
		_, err := c.t.Sessions.AppendMessages(ctx, sid, carryon.AppendInput{
			Messages:     []carryon.NewMessage{{Role: carryon.RoleUser, Content: "please continue the investigation where we stopped"}},
			WriteOptions: carryon.WriteOptions{RequestID: rid},
		})
		return err
	case Continue:
		t0 := time.Now()
		if _, err := c.t.Sessions.Get(ctx, sid, carryon.GetOptions{}); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		t1 := time.Now()
		if err := c.t.Context(ctx, sid); err != nil {
			return fmt.Errorf("context: %w", err)
		}
		c.rec.add(c.phase+"restore", t1.Sub(t0))
		c.rec.add(c.phase+"context", time.Since(t1))
		return nil
	case RunScenario:
		res, err := c.t.Runs.Chat(ctx, carryon.ChatInput{SessionID: sid, Message: c.msg, RequestID: rid})
		if err != nil {
			return err
		}
		c.runs = append(c.runs, res.RunID)
		if res.Status != carryon.RunSucceeded {
			return carryon.Errorf(carryon.EINTERNAL, "the run ended %s", res.Status)
		}
		return nil
	}
	return fmt.Errorf("unknown operation %q", kind)
}
