package runs_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model/scripted"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool"
)

// TestTakeoverWithTalkingModel: runner A is paused in a model call that talks before its tool
// calls; B takes the run over and finishes it; when A resumes, its first event is refused and A
// stops there: A's process lives on, the run ended once, and no message is stored twice. (On
// cac1ba6 A went on after its consumer stopped and panicked: "range function continued iteration
// after function for loop body returned false".)
func TestTakeoverWithTalkingModel(t *testing.T) {
	t.Parallel()
	for _, d := range drivers() {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newHubEnv(t, d.open(t), sessions.Config{})
			logsA := &syncBuf{}
			m := newGated()
			a := runner(t, e.st, e.sess, e.data, m, runs.Config{
				Instance: "runner-a", LeaseTTL: 300 * time.Millisecond, Heartbeat: time.Hour, Poll: 20 * time.Millisecond,
				Logger: slog.New(slog.NewTextHandler(logsA, nil)),
			})
			b := runner(t, e.st, e.sess, e.data, scripted.New(0), runs.Config{Instance: "runner-b", LeaseTTL: 5 * time.Second, Poll: 20 * time.Millisecond})
			s, run := e.startRun(t, a, "Write the plan: outline, then draft")
			stopA := work(t, a)
			<-m.entered
			waitFor(t, "runner A's lease to run out", func() bool { return leaseExpired(t, e.st, run.ID) })
			stopB := work(t, b)
			if done := waitRun(t, b, e.alice, run.ID); done.Status != carryon.RunSucceeded || done.Attempt != 2 {
				t.Fatalf("run after the takeover: %s attempt %d (%s)", done.Status, done.Attempt, done.Error)
			}
			stopB()
			before, _ := e.sess.Get(e.alice, s.ID, carryon.GetOptions{Messages: 100})

			close(m.release)
			waitFor(t, "runner A to give the run up", func() bool { return strings.Contains(logsA.String(), "run lost to another runner") })
			stopA()
			after, _ := e.sess.Get(e.alice, s.ID, carryon.GetOptions{Messages: 100})
			if after.Version != before.Version || len(after.Messages) != len(before.Messages) {
				t.Fatalf("runner A wrote after losing the run: version %d -> %d, messages %d -> %d", before.Version, after.Version, len(before.Messages), len(after.Messages))
			}
			if final := getRun(t, e.st, run.ID); final.Status != carryon.RunSucceeded || final.Attempt != 2 {
				t.Fatalf("runner A changed the run: %s attempt %d", final.Status, final.Attempt)
			}
			if n := endEvents(t, e.st, run.ID); n != 1 {
				t.Fatalf("the run has %d end events, want 1", n)
			}
		})
	}
}

// TestZombieCannotRewriteParkedRun: a run parked after too many takeovers is not rewritten by
// the paused runner that held it: parking moves the attempt on, so the zombie's finish is fenced.
// (On cac1ba6 the zombie replaced the run's error and appended a second run.failed.)
func TestZombieCannotRewriteParkedRun(t *testing.T) {
	t.Parallel()
	for _, d := range drivers() {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newHubEnv(t, d.open(t), sessions.Config{})
			logsA := &syncBuf{}
			m := newGated()
			m.fail = errors.New("connection reset by peer")
			a := runner(t, e.st, e.sess, e.data, m, runs.Config{
				Instance: "runner-a", LeaseTTL: 300 * time.Millisecond, Heartbeat: time.Hour, Poll: 20 * time.Millisecond,
				Logger: slog.New(slog.NewTextHandler(logsA, nil)),
			})
			b := runner(t, e.st, e.sess, e.data, scripted.New(0), runs.Config{Instance: "runner-b", MaxAttempts: 1, Poll: 20 * time.Millisecond})
			_, run := e.startRun(t, a, "Write the plan: outline, then draft")
			stopA := work(t, a)
			<-m.entered
			waitFor(t, "runner A's lease to run out", func() bool { return leaseExpired(t, e.st, run.ID) })
			stopB := work(t, b)
			waitFor(t, "the run to be parked", func() bool { return getRun(t, e.st, run.ID).Status == carryon.RunFailed })
			stopB()
			parked := getRun(t, e.st, run.ID)

			close(m.release) // A's model call fails; A tries to record that
			waitFor(t, "runner A to try to finish the run", func() bool {
				return strings.Contains(logsA.String(), "record the end of the run") || strings.Contains(logsA.String(), "run ended")
			})
			stopA()
			final := getRun(t, e.st, run.ID)
			if final.Error != parked.Error || final.Attempt != parked.Attempt || !strings.HasPrefix(final.Error, "parked after") {
				t.Fatalf("the zombie rewrote the parked run: %q (attempt %d) -> %q (attempt %d)", parked.Error, parked.Attempt, final.Error, final.Attempt)
			}
			if n := endEvents(t, e.st, run.ID); n != 1 {
				t.Fatalf("the run has %d end events, want 1", n)
			}
		})
	}
}

// TestRunnerPanicFailsTheRunOnly: a panic while a run executes fails that run with an internal
// error and releases its lease; the process goes on running other runs. (On cac1ba6 the panic took
// the process down.)
func TestRunnerPanicFailsTheRunOnly(t *testing.T) {
	t.Parallel()
	logs := &syncBuf{}
	e := newHubEnv(t, drivers()[0].open(t), sessions.Config{})
	svc := runner(t, e.st, e.sess, e.data, &panicking{}, runs.Config{Poll: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	work(t, svc)
	s1, _ := e.sess.Create(e.alice, carryon.NewSession{})
	first, err := svc.Start(e.alice, s1.ID, carryon.NewRun{Message: "Write the plan: outline, then draft"})
	if err != nil {
		t.Fatal(err)
	}
	got := waitRun(t, svc, e.alice, first.ID)
	if got.Status != carryon.RunFailed || !strings.HasPrefix(got.Error, "internal error") || got.LeaseOwner != "" {
		t.Fatalf("panicked run: %s %q lease %q", got.Status, got.Error, got.LeaseOwner)
	}
	if !strings.Contains(logs.String(), "a bug in a provider") || !strings.Contains(logs.String(), "runtime/debug.Stack") {
		t.Fatalf("the panic and its stack are not in the log:\n%s", logs)
	}
	s2, _ := e.sess.Create(e.alice, carryon.NewSession{})
	second, err := svc.Start(e.alice, s2.ID, carryon.NewRun{Message: "Write the plan: outline, then draft"})
	if err != nil {
		t.Fatal(err)
	}
	if got := waitRun(t, svc, e.alice, second.ID); got.Status != carryon.RunSucceeded {
		t.Fatalf("the next run: %s (%s)", got.Status, got.Error)
	}
}

// TestRollingRestartsDoNotPark: a run handed back at shutdown three times in a row, with
// MaxAttempts 2, is not parked: only takeovers of expired leases count. (On cac1ba6 every claim
// counted, and the third runner parked the run.)
func TestRollingRestartsDoNotPark(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, drivers()[0].open(t), sessions.Config{})
	m := newBlocking()
	cfg := runs.Config{MaxAttempts: 2, Poll: 20 * time.Millisecond}
	first := runner(t, e.st, e.sess, e.data, m, cfg)
	_, run := e.startRun(t, first, "Write the plan: outline, then draft")
	for i := range 3 {
		svc := first
		if i > 0 {
			svc = runner(t, e.st, e.sess, e.data, m, cfg)
		}
		stop := work(t, svc)
		waitFor(t, "the run's model call on this instance", func() bool {
			select {
			case <-m.entered:
				return true
			default:
				return getRun(t, e.st, run.ID).Status.Terminal() // parked: checked below
			}
		})
		stop() // a graceful shutdown hands the run back
	}
	last := runner(t, e.st, e.sess, e.data, scripted.New(0), cfg)
	work(t, last)
	got := waitRun(t, last, e.alice, run.ID)
	if got.Status != carryon.RunSucceeded || got.Takeovers != 0 || got.Attempt != 4 {
		t.Fatalf("after three restarts: %s (%s), %d takeovers, attempt %d", got.Status, got.Error, got.Takeovers, got.Attempt)
	}
}

// TestCancelFromAnotherInstance: a cancel requested through another instance stops the model call
// in progress: within a heartbeat on SQLite, and at once through LISTEN/NOTIFY on PostgreSQL (whose
// heartbeat is slow here). (On cac1ba6 the runner only looked at the request between steps, so a
// long model call went on to its end.)
func TestCancelFromAnotherInstance(t *testing.T) {
	t.Parallel()
	for _, d := range drivers() {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newHubEnv(t, d.open(t), sessions.Config{})
			m := newBlocking()
			hb := 20 * time.Millisecond
			if d.name == "postgres" {
				hb = 10 * time.Second // the notification is what stops it; the heartbeat is a backstop
			}
			a := runner(t, e.st, e.sess, e.data, m, runs.Config{Heartbeat: hb, LeaseTTL: time.Hour, Poll: 20 * time.Millisecond})
			b := runner(t, e.st, e.sess, e.data, scripted.New(0), runs.Config{})
			work(t, a)
			listen(t, a)
			_, run := e.startRun(t, a, "Write the plan: outline, then draft")
			<-m.entered
			if _, err := b.Cancel(e.alice, run.ID, carryon.RetryOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := waitRun(t, b, e.alice, run.ID); got.Status != carryon.RunCancelled {
				t.Fatalf("run after a cancel through another instance: %s (%s)", got.Status, got.Error)
			}
		})
	}
}

// TestCancelDuringToolCall: a cancel while a tool runs lets the call finish and journals its
// outcome before the run stops. (On cac1ba6 the finished call stayed "started" in a cancelled run.)
func TestCancelDuringToolCall(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, drivers()[0].open(t), sessions.Config{})
	entered, release := make(chan struct{}), make(chan struct{})
	slow := &probe{name: "slow_step", fn: func(context.Context, tool.Call) { close(entered); <-release }}
	svc := runner(t, e.st, e.sess, e.data, &caller{tool: "slow_step"}, runs.Config{Poll: 20 * time.Millisecond}, slow)
	work(t, svc)
	_, run := e.startRun(t, svc, "go")
	<-entered
	if _, err := svc.Cancel(e.alice, run.ID, carryon.RetryOptions{}); err != nil {
		t.Fatal(err)
	}
	close(release)
	if got := waitRun(t, svc, e.alice, run.ID); got.Status != carryon.RunCancelled {
		t.Fatalf("run: %s (%s)", got.Status, got.Error)
	}
	acts, _ := svc.Actions(e.alice, run.ID)
	if len(acts) != 1 || acts[0].Status != carryon.ActionSucceeded || acts[0].FinishedAt == nil {
		t.Fatalf("journal after a cancel during the call: %+v", acts)
	}
}

// TestLongStepKeepsSessionAlive: a model step longer than the session's idle TTL neither fails the
// run on an expired session nor lets the session expire while the run holds it: the heartbeat
// keeps it alive. (On cac1ba6 the run failed with session_expired.)
func TestLongStepKeepsSessionAlive(t *testing.T) {
	t.Parallel()
	clk := newClock()
	e := newHubEnv(t, drivers()[0].open(t), sessions.Config{Now: clk.Now})
	var s *carryon.Session
	kept := make(chan bool, 1)
	m := &caller{tool: "update_working_memory", before: func() {
		clk.Advance(2 * time.Minute) // twice the idle TTL
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			v, err := e.sess.Get(e.alice, s.ID, carryon.GetOptions{})
			if err == nil && v.ExpiresAt.After(clk.Now()) {
				kept <- true
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		kept <- false
	}}
	svc := runner(t, e.st, e.sess, e.data, m, runs.Config{Now: clk.Now, LeaseTTL: time.Hour, Heartbeat: 10 * time.Millisecond, Poll: 20 * time.Millisecond})
	work(t, svc)
	idle := int64(60)
	s, _ = e.sess.Create(e.alice, carryon.NewSession{IdleTTLSeconds: &idle})
	run, err := svc.Start(e.alice, s.ID, carryon.NewRun{Message: "go"})
	if err != nil {
		t.Fatal(err)
	}
	got := waitRun(t, svc, e.alice, run.ID)
	if !<-kept {
		t.Error("the session expired while its run was in a model call")
	}
	if got.Status != carryon.RunSucceeded {
		t.Fatalf("a step longer than the idle TTL: %s (%s)", got.Status, got.Error)
	}
}

// TestEffectStartsWithWholeLease: a tool call starts only with a whole lease ahead of it, even
// when the heartbeat did not renew the lease during a long model call. (On cac1ba6 the effect
// started with whatever was left of the lease taken at the claim.)
func TestEffectStartsWithWholeLease(t *testing.T) {
	t.Parallel()
	clk := newClock()
	e := newHubEnv(t, drivers()[0].open(t), sessions.Config{Now: clk.Now})
	const ttl = 10 * time.Second
	var left time.Duration
	var runID string
	check := &probe{name: "check_lease", fn: func(context.Context, tool.Call) {
		left = getRun(t, e.st, runID).LeaseExpiresAt.Sub(clk.Now())
	}}
	m := &caller{tool: "check_lease", before: func() { clk.Advance(ttl - time.Second) }}
	svc := runner(t, e.st, e.sess, e.data, m, runs.Config{Now: clk.Now, LeaseTTL: ttl, Heartbeat: time.Hour, Poll: 20 * time.Millisecond}, check)
	_, run := e.startRun(t, svc, "go")
	runID = run.ID
	work(t, svc)
	if got := waitRun(t, svc, e.alice, run.ID); got.Status != carryon.RunSucceeded {
		t.Fatalf("run: %s (%s)", got.Status, got.Error)
	}
	if left < ttl {
		t.Fatalf("the effect started with %v of lease left, want the whole %v", left, ttl)
	}
}

// TestRunErrorIsASentence: a failed run's error reads as a sentence, the message with its code
// after it.
func TestRunErrorIsASentence(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, drivers()[0].open(t), sessions.Config{})
	m := newGated()
	m.fail = carryon.Errorf(carryon.EINVALID, "the model refused the request")
	close(m.release)
	svc := runner(t, e.st, e.sess, e.data, m, runs.Config{Poll: 20 * time.Millisecond})
	work(t, svc)
	_, run := e.startRun(t, svc, "go")
	got := waitRun(t, svc, e.alice, run.ID)
	if got.Status != carryon.RunFailed || got.Error != "model gated: the model refused the request (invalid_request)" {
		t.Fatalf("run error = %q (%s)", got.Error, got.Status)
	}
}

// countingStore records the limits runners ask RunnableRuns for.
type countingStore struct {
	store.Store
	mu     sync.Mutex
	limits []int
}

type countingTx struct {
	store.Tx
	s *countingStore
}

func (c *countingStore) Write(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	return c.Store.Write(ctx, func(ctx context.Context, tx store.Tx) error { return fn(ctx, countingTx{tx, c}) })
}

func (c *countingStore) Read(ctx context.Context, fn func(store.Tx) error) error {
	return c.Store.Read(ctx, func(tx store.Tx) error { return fn(countingTx{tx, c}) })
}

func (c countingTx) RunnableRuns(ctx context.Context, now time.Time, limit int) ([]*carryon.Run, error) {
	c.s.mu.Lock()
	c.s.limits = append(c.s.limits, limit)
	c.s.mu.Unlock()
	return c.Tx.RunnableRuns(ctx, now, limit)
}

// TestClaimsFetchOnlyFreeWorkers: with one of two workers busy, a runner asks for one runnable run,
// not for as many as it has workers. (On cac1ba6 it always asked for Workers.)
func TestClaimsFetchOnlyFreeWorkers(t *testing.T) {
	t.Parallel()
	cs := &countingStore{Store: drivers()[0].open(t)}
	e := newHubEnv(t, cs, sessions.Config{})
	m := newBlocking()
	svc := runner(t, cs, e.sess, e.data, m, runs.Config{Workers: 2, Poll: 10 * time.Millisecond})
	s, _ := e.sess.Create(e.alice, carryon.NewSession{})
	if _, err := svc.Start(e.alice, s.ID, carryon.NewRun{Message: "go"}); err != nil {
		t.Fatal(err)
	}
	work(t, svc)
	<-m.entered // one worker is busy
	cs.mu.Lock()
	seen := len(cs.limits)
	cs.mu.Unlock()
	waitFor(t, "another claim", func() bool { cs.mu.Lock(); defer cs.mu.Unlock(); return len(cs.limits) > seen+1 })
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if last := cs.limits[len(cs.limits)-1]; last != 1 {
		t.Fatalf("with one free worker a claim asked for %d runs (%v)", last, cs.limits)
	}
}

// TestCancelBeforeApproval: a cancel that comes while the model answers, with a call that asks
// for approval, ends the run cancelled: it does not park waiting for a decision that the cancel
// already made. (Before, the run stopped in waiting_approval and the cancel was lost.)
func TestCancelBeforeApproval(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, drivers()[0].open(t), sessions.Config{})
	var svc *runs.Service
	var runID string
	m := &caller{tool: "slow_step", before: func() {
		if _, err := svc.Cancel(e.alice, runID, carryon.RetryOptions{}); err != nil {
			t.Error(err)
		}
	}}
	ran := false
	step := &probe{name: "slow_step", fn: func(context.Context, tool.Call) { ran = true }}
	svc = toolRunner(t, e.st, e.sess, e.data, m, runs.Config{Heartbeat: time.Hour}, []string{"slow_step"}, step)
	s, err := e.sess.Create(e.alice, carryon.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	run, err := svc.Start(e.alice, s.ID, carryon.NewRun{Message: "go"})
	if err != nil {
		t.Fatal(err)
	}
	runID = run.ID
	work(t, svc)
	if got := waitRun(t, svc, e.alice, run.ID); got.Status != carryon.RunCancelled || ran {
		t.Fatalf("run: %s (%s), tool ran: %v", got.Status, got.Error, ran)
	}
}
