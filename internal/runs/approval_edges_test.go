package runs_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
)

// pausedWrite is the scene of a runner paused inside a tool call: runner A's first call of
// slow_write (unsafe) blocks until release, then writes notes.md through write_file with A's
// fencing token; A's lease runs out and runner B takes the run over, which stops waiting for an
// approval of the cut-off call.
type pausedWrite struct {
	e       *hubEnv
	a, b    *runs.Service
	logsA   *syncBuf
	run     *carryon.Run
	sid     string
	release chan struct{}
	stopA   func()
}

func newPausedWrite(t *testing.T) *pausedWrite {
	t.Helper()
	p := &pausedWrite{e: newHubEnv(t, drivers()[0].open(t), sessions.Config{}), logsA: &syncBuf{}, release: make(chan struct{})}
	entered := make(chan struct{})
	var once sync.Once
	slow := &probe{name: "slow_write", fn: func(ctx context.Context, c tool.Call) {
		first := false
		once.Do(func() { first = true })
		if !first {
			return
		}
		close(entered)
		<-p.release
		c.Args = []byte(`{"path":"notes.md","content":"written by a runner that lost the run\n"}`)
		workspace.WriteFile().Call(ctx, c) // refused when fenced: the file shows it
	}}
	m := &caller{tool: "slow_write"}
	p.a = runner(t, p.e.st, p.e.sess, p.e.data, m, runs.Config{
		Instance: "runner-a", LeaseTTL: 300 * time.Millisecond, Heartbeat: time.Hour, Poll: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(p.logsA, nil)),
	}, slow)
	p.b = runner(t, p.e.st, p.e.sess, p.e.data, m, runs.Config{Instance: "runner-b", Poll: 20 * time.Millisecond}, slow)
	s, _ := p.e.sess.Create(p.e.alice, carryon.NewSession{})
	p.sid = s.ID
	var err error
	if p.run, err = p.a.Start(p.e.alice, s.ID, carryon.NewRun{Message: "Write the notes"}); err != nil {
		t.Fatal(err)
	}
	p.stopA = work(t, p.a)
	t.Cleanup(p.wake) // before A's runners are stopped, should the test end early
	<-entered
	waitFor(t, "runner A's lease to run out", func() bool { return leaseExpired(t, p.e.st, p.run.ID) })
	work(t, p.b)
	waitFor(t, "the run to wait for an approval", func() bool { return getRun(t, p.e.st, p.run.ID).Status == carryon.RunWaitingApproval })
	return p
}

func (p *pausedWrite) wake() {
	select {
	case <-p.release:
	default:
		close(p.release)
	}
}

// wakeA lets runner A go on inside its tool call and waits until it gave the run up.
func (p *pausedWrite) wakeA(t *testing.T) {
	t.Helper()
	p.wake()
	waitFor(t, "runner A to give the run up", func() bool { return strings.Contains(p.logsA.String(), "run lost to another runner") })
	p.stopA()
}

// TestPausedInToolIsFencedAtTheFile: runner A, paused inside a tool call, wakes up after runner B
// took the run over and the user chose skip; A's write is refused by the workspace's fence, so the
// skipped effect never happens. finished_at stays unset while the run waits and after the
// approval. (On cac1ba6 A wrote the file, and the waiting run had finished_at set.)
func TestPausedInToolIsFencedAtTheFile(t *testing.T) {
	t.Parallel()
	p := newPausedWrite(t)
	if w := getRun(t, p.e.st, p.run.ID); w.FinishedAt != nil {
		t.Fatalf("a run waiting for an approval has finished_at %v", w.FinishedAt)
	}
	acts, _ := p.b.Actions(p.e.alice, p.run.ID)
	approved, err := p.b.Approve(p.e.alice, p.run.ID, carryon.Approval{ActionID: acts[0].ID, Decision: carryon.DecisionSkip})
	if err != nil {
		t.Fatal(err)
	}
	if approved.FinishedAt != nil {
		t.Fatalf("an approved run has finished_at %v", approved.FinishedAt)
	}
	if got := waitRun(t, p.b, p.e.alice, p.run.ID); got.Status != carryon.RunSucceeded {
		t.Fatalf("run after the skip: %s (%s)", got.Status, got.Error)
	}
	p.wakeA(t)
	if _, err := os.Stat(filepath.Join(p.e.data, "workspaces", p.sid, "notes.md")); !os.IsNotExist(err) {
		t.Fatalf("the paused runner carried out the skipped effect (stat: %v)", err)
	}
}

// TestInterruptWhileWaitingForApproval: multitask=interrupt on a session whose run waits for an
// approval ends that run as interrupted and starts the new one, without a human. (On cac1ba6 the
// new run stayed queued until someone decided.)
func TestInterruptWhileWaitingForApproval(t *testing.T) {
	t.Parallel()
	p := newPausedWrite(t)
	next, err := p.b.Start(p.e.alice, p.sid, carryon.NewRun{Message: "Something else", Multitask: carryon.MultitaskInterrupt})
	if err != nil {
		t.Fatal(err)
	}
	if got := waitRun(t, p.b, p.e.alice, next.ID); got.Status != carryon.RunSucceeded {
		t.Fatalf("the new run: %s (%s)", got.Status, got.Error)
	}
	old := getRun(t, p.e.st, p.run.ID)
	if old.Status != carryon.RunInterrupted || old.FinishedAt == nil {
		t.Fatalf("the waiting run: %s, finished_at %v", old.Status, old.FinishedAt)
	}
	p.wakeA(t)
}
