package runs_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/scripted"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/store/postgres"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// driver opens a fresh store of one kind.
type driver struct {
	name string
	open func(t *testing.T) store.Store
}

// drivers are SQLite (a file) and, when CARRYON_TEST_POSTGRES_URL is set, PostgreSQL.
func drivers() []driver {
	return []driver{
		{"sqlite", func(t *testing.T) store.Store {
			st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "carryon.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}},
		{"postgres", func(t *testing.T) store.Store {
			st, err := postgres.Open(context.Background(), pgtest.NewDatabase(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}},
	}
}

// hubEnv is a store with a sessions service and a user, for tests that bring their own runners.
type hubEnv struct {
	st    store.Store
	sess  *sessions.Service
	data  string
	alice context.Context
}

func newHubEnv(t *testing.T, st store.Store, cfg sessions.Config) *hubEnv {
	t.Helper()
	e := &hubEnv{st: st, sess: sessions.New(st, cfg), data: t.TempDir()}
	u := &carryon.User{ID: "usr_alice", Name: "alice"}
	if err := st.Write(context.Background(), func(_ context.Context, tx store.Tx) error { return tx.InsertUser(context.Background(), u) }); err != nil {
		t.Fatal(err)
	}
	e.alice = carryon.NewContextWithUser(context.Background(), u)
	return e
}

// startRun creates a session of alice and starts a run on it through svc with message.
func (e *hubEnv) startRun(t *testing.T, svc *runs.Service, message string) (*carryon.Session, *carryon.Run) {
	t.Helper()
	s, err := e.sess.Create(e.alice, carryon.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	run, err := svc.Start(e.alice, s.ID, carryon.NewRun{Message: message})
	if err != nil {
		t.Fatal(err)
	}
	return s, run
}

// work runs svc's runners until the returned stop is called (or the test ends); stop waits for
// them to return.
func work(t *testing.T, svc *runs.Service) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { svc.Work(ctx); close(done) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// listen runs svc's listener for other processes' run changes until the test ends.
func listen(t *testing.T, svc *runs.Service) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { svc.Listen(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// waitFor polls cond until it holds, failing the test after 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Eventually(t, what, cond)
}

// getRun reads a run straight from the store.
func getRun(t *testing.T, st store.Store, runID string) *carryon.Run {
	t.Helper()
	var r *carryon.Run
	if err := st.Read(context.Background(), func(tx store.Tx) error {
		var err error
		r, err = tx.GetRun(context.Background(), "usr_alice", runID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return r
}

// leaseExpired says whether the run's lease ran out (by the wall clock).
func leaseExpired(t *testing.T, st store.Store, runID string) bool {
	r := getRun(t, st, runID)
	return r.LeaseExpiresAt != nil && r.LeaseExpiresAt.Before(time.Now())
}

// endEvents counts the run's stored run.finished and run.failed events.
func endEvents(t *testing.T, st store.Store, runID string) int {
	t.Helper()
	n := 0
	if err := st.Read(context.Background(), func(tx store.Tx) error {
		evs, err := tx.EventsAfter(context.Background(), "usr_alice", runID, 0, 10000)
		for _, e := range evs {
			if e.Type == carryon.EventRunFinished || e.Type == carryon.EventRunFailed {
				n++
			}
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// gated is a model paused (as by SIGSTOP) in its first call until released, ignoring its context;
// then it talks before it answers as the scripted model does, or fails with fail when set. Later
// calls answer at once.
type gated struct {
	inner   scripted.Provider
	fail    error
	entered chan struct{}
	release chan struct{}
	calls   atomic.Int32
}

func newGated() *gated {
	return &gated{entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *gated) Name() string { return "gated" }

func (g *gated) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		if g.calls.Add(1) == 1 {
			close(g.entered)
			<-g.release
			ctx = context.WithoutCancel(ctx)
			if g.fail != nil {
				yield(model.Chunk{}, g.fail)
				return
			}
		}
		if !yield(model.Chunk{Delta: "Let me look at that. "}, nil) {
			return
		}
		for c, err := range g.inner.Stream(ctx, req) {
			if !yield(c, err) || err != nil {
				return
			}
		}
	}
}

// blocking is a model whose calls wait until their context ends (a long model call that honours
// cancellation), counting them.
type blocking struct {
	calls   atomic.Int32
	entered chan struct{} // receives once per call
}

func newBlocking() *blocking { return &blocking{entered: make(chan struct{}, 100)} }

func (b *blocking) Name() string { return "blocking" }

func (b *blocking) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		b.calls.Add(1)
		b.entered <- struct{}{}
		<-ctx.Done()
		yield(model.Chunk{}, ctx.Err())
	}
}

// panicking is a model that panics on its first call and answers as the scripted model after.
type panicking struct {
	scripted.Provider
	calls atomic.Int32
}

func (p *panicking) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	if p.calls.Add(1) == 1 {
		panic(errors.New("a bug in a provider"))
	}
	return p.Provider.Stream(ctx, req)
}

// caller is a model that calls one tool (running before first, when set) and, once the tool's
// result is in the conversation, ends its turn.
type caller struct {
	tool   string
	before func()
}

func (c *caller) Name() string { return "caller" }

func (c *caller) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == model.RoleTool {
			yield(model.Chunk{Delta: "Done.", FinishReason: model.FinishStop}, nil)
			return
		}
		if c.before != nil {
			c.before()
		}
		yield(model.Chunk{ToolCalls: []model.ToolCall{{ID: "call_1", Name: c.tool, Arguments: []byte(`{}`)}}, FinishReason: model.FinishToolCalls}, nil)
	}
}

// probe is an unsafe tool that calls fn (which may block) and answers "done".
type probe struct {
	name string
	fn   func(ctx context.Context, c tool.Call)
}

func (p *probe) Name() string                { return p.name }
func (p *probe) Description() string         { return "A tool of the tests." }
func (p *probe) Schema() json.RawMessage     { return json.RawMessage(`{"type":"object"}`) }
func (p *probe) Effect() carryon.EffectClass { return carryon.EffectUnsafe }
func (p *probe) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	p.fn(ctx, c)
	return tool.Result{Content: "done"}, nil
}

// clock is a settable clock for the services under test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now().UTC().Truncate(time.Microsecond)} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// waitRun waits for the run to end through svc.
func waitRun(t *testing.T, svc *runs.Service, ctx context.Context, runID string) *carryon.Run {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	run, err := svc.Wait(wctx, runID)
	if err != nil {
		t.Fatalf("wait for %s: %v", runID, err)
	}
	return run
}
