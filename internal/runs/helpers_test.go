package runs_test

import (
	"context"
	"path/filepath"
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
	"github.com/carryon-hub/carryon/store/sqlite"
)

type fixture struct {
	st    store.Store
	sess  *sessions.Service
	runs  *runs.Service
	data  string
	alice context.Context
	bob   context.Context
	stop  context.CancelFunc
}

// newFixture runs a run manager with the given model (nil: the scripted model) over a SQLite file.
func newFixture(t *testing.T, p model.Provider, extra ...tool.Tool) *fixture {
	t.Helper()
	return newFixtureWith(t, p, runs.Config{}, extra...)
}

// newFixtureWith is newFixture with cfg's Prices and Now for the run manager.
func newFixtureWith(t *testing.T, p model.Provider, cfg runs.Config, extra ...tool.Tool) *fixture {
	t.Helper()
	data := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(data, "carryon.db"))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, data: data}
	f.sess = sessions.New(st, sessions.Config{})
	if p == nil {
		p = scripted.New(0)
	}
	reg, err := tool.NewRegistry(append(append(workspace.Tools(), tool.UpdateWorkingMemory()), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	builder := contextbuild.New(contextbuild.Config{}, f.sess, contextbuild.ModelSummarizer{Provider: p})
	eng := engine.New(engine.Config{Model: "scripted", Workspaces: filepath.Join(data, "workspaces")}, p, reg, builder)
	f.runs = runs.New(st, f.sess, eng, runs.Config{Poll: 50 * time.Millisecond, LeaseTTL: 2 * time.Second, Prices: cfg.Prices, Now: cfg.Now})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.runs.Work(ctx); close(done) }()
	f.stop = func() { cancel(); <-done }
	t.Cleanup(func() { f.stop(); st.Close() })
	f.alice = f.user(t, "usr_alice", "alice")
	f.bob = f.user(t, "usr_bob", "bob")
	return f
}

func (f *fixture) user(t *testing.T, id, name string) context.Context {
	t.Helper()
	u := &carryon.User{ID: id, Name: name}
	if err := f.st.Write(context.Background(), func(_ context.Context, tx store.Tx) error { return tx.InsertUser(context.Background(), u) }); err != nil {
		t.Fatal(err)
	}
	return carryon.NewContextWithUser(context.Background(), u)
}

func (f *fixture) wait(t *testing.T, ctx context.Context, runID string) *carryon.Run {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	run, err := f.runs.Wait(wctx, runID)
	if err != nil {
		t.Fatalf("wait for %s: %v", runID, err)
	}
	return run
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := carryon.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}
