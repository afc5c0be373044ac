package runs_test

import (
	"bytes"
	"context"
	"iter"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/scripted"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
)

// frozen is a model that stops answering until released, ignoring its context: a runner paused
// (SIGSTOP) in the middle of a model call.
type frozen struct {
	scripted.Provider
	release chan struct{}
	entered chan struct{}
	once    sync.Once
}

func (f *frozen) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	f.once.Do(func() { close(f.entered) })
	<-f.release
	return f.Provider.Stream(context.WithoutCancel(ctx), req)
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// runner makes a run manager over st with its own model, lease and logs, and the workspace and
// memory tools plus extra.
func runner(t *testing.T, st store.Store, sess *sessions.Service, data string, p model.Provider, cfg runs.Config, extra ...tool.Tool) *runs.Service {
	t.Helper()
	reg, err := tool.NewRegistry(append(append(workspace.Tools(), tool.UpdateWorkingMemory()), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	builder := contextbuild.New(contextbuild.Config{}, sess, nil)
	eng := engine.New(engine.Config{Model: "scripted", Workspaces: filepath.Join(data, "workspaces")}, p, reg, builder)
	return runs.New(st, sess, eng, cfg)
}

// TestPausedRunnerIsFenced: runner A is paused in a model call past its lease; runner B takes the
// run over and finishes it; when A wakes up, every write it tries is refused and logged, and the
// session holds B's work only.
func TestPausedRunnerIsFenced(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.stop() // this test brings its own two runners
	logsA := &syncBuf{}
	model := &frozen{release: make(chan struct{}), entered: make(chan struct{})}
	a := runner(t, f.st, f.sess, f.data, model, runs.Config{
		Instance: "runner-a", LeaseTTL: 300 * time.Millisecond, Heartbeat: time.Hour, Poll: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logsA, nil)),
	})
	b := runner(t, f.st, f.sess, f.data, scripted.New(0), runs.Config{Instance: "runner-b", LeaseTTL: 5 * time.Second, Poll: 20 * time.Millisecond})

	s, _ := f.sess.Create(f.alice, carryon.NewSession{})
	run, err := a.Start(f.alice, s.ID, carryon.NewRun{Message: "Write the plan: outline, then draft"})
	if err != nil {
		t.Fatal(err)
	}
	ctxA, stopA := context.WithCancel(context.Background())
	doneA := make(chan struct{})
	go func() { a.Work(ctxA); close(doneA) }()
	<-model.entered // A holds the run, frozen in its model call

	waitFor(t, "runner A's lease to run out", func() bool { return leaseExpired(t, f.st, run.ID) })
	ctxB, stopB := context.WithCancel(context.Background())
	doneB := make(chan struct{})
	go func() { b.Work(ctxB); close(doneB) }()
	done := f.wait(t, f.alice, run.ID)
	if done.Status != carryon.RunSucceeded || done.Attempt != 2 {
		t.Fatalf("run after the takeover: %s attempt %d (%s)", done.Status, done.Attempt, done.Error)
	}
	stopB()
	<-doneB
	before, _ := f.sess.Get(f.alice, s.ID, carryon.GetOptions{Messages: 100})

	close(model.release) // A wakes up and tries to go on
	waitFor(t, "runner A's write to be refused", func() bool { return strings.Contains(logsA.String(), "(run_fenced)") })
	stopA()
	<-doneA
	if !strings.Contains(logsA.String(), "(run_fenced)") {
		t.Fatalf("runner A's write was not refused; its logs:\n%s", logsA)
	}
	after, _ := f.sess.Get(f.alice, s.ID, carryon.GetOptions{Messages: 100})
	if after.Version != before.Version || len(after.Messages) != len(before.Messages) {
		t.Fatalf("runner A wrote after losing the run: version %d -> %d, messages %d -> %d", before.Version, after.Version, len(before.Messages), len(after.Messages))
	}
	final, _ := a.GetRun(f.alice, run.ID)
	if final.Status != carryon.RunSucceeded || final.Attempt != 2 {
		t.Fatalf("runner A changed the run: %+v", final)
	}
}
