package runs_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/tool"
)

// TestShutdownMidToolCall: a graceful shutdown while a tool runs cuts the call off, keeps it
// started in the journal and hands the run back; the next runner settles the call by its effect
// class (here unsafe: the run waits for a decision) without counting a takeover, and nothing
// panics.
func TestShutdownMidToolCall(t *testing.T) {
	e := newHubEnv(t, drivers()[0].open(t), sessions.Config{})
	var calls atomic.Int32
	entered := make(chan struct{}, 10)
	slow := &probe{name: "slow_step", fn: func(ctx context.Context, _ tool.Call) {
		calls.Add(1)
		entered <- struct{}{}
		<-ctx.Done() // honours cancellation: the shutdown cuts it off
	}}
	m := &caller{tool: "slow_step"}
	first := runner(t, e.st, e.sess, e.data, m, runs.Config{Poll: 20 * time.Millisecond}, slow)
	_, run := e.startRun(t, first, "go")
	stop := work(t, first)
	<-entered
	stop()
	if r := getRun(t, e.st, run.ID); r.Status != carryon.RunRunning || r.LeaseOwner != "" {
		t.Fatalf("after the shutdown: %s, lease owner %q", r.Status, r.LeaseOwner)
	}
	acts, _ := first.Actions(e.alice, run.ID)
	if len(acts) != 1 || acts[0].Status != carryon.ActionStarted {
		t.Fatalf("journal after the shutdown: %+v", acts)
	}
	next := runner(t, e.st, e.sess, e.data, m, runs.Config{Poll: 20 * time.Millisecond}, slow)
	work(t, next)
	got := waitRun(t, next, e.alice, run.ID)
	if got.Status != carryon.RunWaitingApproval || got.Takeovers != 0 || calls.Load() != 1 {
		t.Fatalf("after the restart: %s (%s), %d takeovers, the unsafe tool ran %d times", got.Status, got.Error, got.Takeovers, calls.Load())
	}
}
