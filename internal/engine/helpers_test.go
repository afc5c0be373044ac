package engine_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// fixture wires a run manager, the sessions service and the engine over a SQLite file.
type fixture struct {
	st    store.Store
	sess  *sessions.Service
	eng   *engine.Engine
	runs  *runs.Service
	data  string
	alice context.Context
	stop  func()
}

// newFixture runs the engine with provider p, calling modelName, and the workspace and memory
// tools plus extra; every model delta is an event of its own.
func newFixture(t *testing.T, p model.Provider, modelName string, extra ...tool.Tool) *fixture {
	t.Helper()
	return newFixtureEvery(t, p, modelName, time.Nanosecond, extra...)
}

// newFixtureEvery is newFixture with model deltas coalesced into an event at most every deltaEvery.
func newFixtureEvery(t *testing.T, p model.Provider, modelName string, deltaEvery time.Duration, extra ...tool.Tool) *fixture {
	t.Helper()
	return newFixtureConfig(t, p, engine.Config{Model: modelName, DeltaEvery: deltaEvery}, extra...)
}

// newFixtureConfig is newFixture with the engine's configuration cfg (its Workspaces set here).
func newFixtureConfig(t *testing.T, p model.Provider, cfg engine.Config, extra ...tool.Tool) *fixture {
	t.Helper()
	return newFixtureBuilder(t, p, cfg, contextbuild.Config{}, extra...)
}

// newFixtureBuilder is newFixtureConfig with the context builder's configuration.
func newFixtureBuilder(t testing.TB, p model.Provider, cfg engine.Config, bcfg contextbuild.Config, extra ...tool.Tool) *fixture {
	t.Helper()
	data := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(data, "carryon.db"))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, data: data, sess: sessions.New(st, sessions.Config{})}
	reg, err := tool.NewRegistry(append(append(workspace.Tools(), tool.UpdateWorkingMemory()), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	builder := contextbuild.New(bcfg, f.sess, contextbuild.ModelSummarizer{Provider: p, Model: cfg.Model})
	cfg.Workspaces = filepath.Join(data, "workspaces")
	f.eng = engine.New(cfg, p, reg, builder)
	f.startRuns()
	t.Cleanup(func() { f.stop(); st.Close() })
	u := &carryon.User{ID: "usr_alice", Name: "alice"}
	if err := st.Write(context.Background(), func(_ context.Context, tx store.Tx) error { return tx.InsertUser(context.Background(), u) }); err != nil {
		t.Fatal(err)
	}
	f.alice = carryon.NewContextWithUser(context.Background(), u)
	return f
}

// startRuns starts a run manager working in the background (a server starting).
func (f *fixture) startRuns() {
	f.runs = runs.New(f.st, f.sess, f.eng, runs.Config{Poll: 50 * time.Millisecond, LeaseTTL: 2 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.runs.Work(ctx); close(done) }()
	f.stop = func() { cancel(); <-done; f.stop = func() {} }
}

// start creates a session and starts a run on it with message.
func (f *fixture) start(t *testing.T, message string) (string, *carryon.Run) {
	t.Helper()
	s, err := f.sess.Create(f.alice, carryon.NewSession{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: message})
	if err != nil {
		t.Fatal(err)
	}
	return s.ID, run
}

func (f *fixture) wait(t testing.TB, runID string) *carryon.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(f.alice, 30*time.Second)
	defer cancel()
	run, err := f.runs.Wait(ctx, runID)
	if err != nil {
		t.Fatalf("wait for %s: %v", runID, err)
	}
	return run
}

// messages returns every message of the session.
func (f *fixture) messages(t *testing.T, id string) []*carryon.Message {
	t.Helper()
	page, err := f.sess.ListMessages(f.alice, id, carryon.MessageFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return page.Items
}

// events returns the run's stored events.
func (f *fixture) events(t *testing.T, runID string) []*carryon.Event {
	t.Helper()
	st, err := f.runs.Events(f.alice, runID, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out []*carryon.Event
	for {
		e, ok, err := st.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, e)
	}
}

// shape describes a message as role, then the call ids it asks for or answers: "assistant>call_1",
// "tool<call_1", "user", "assistant".
func shape(t *testing.T, m *carryon.Message) string {
	t.Helper()
	s := string(m.Role)
	if len(m.ToolCalls) > 0 {
		var calls []carryon.ToolCall
		if err := json.Unmarshal(m.ToolCalls, &calls); err != nil {
			t.Fatalf("message %d: tool calls %s: %v", m.Seq, m.ToolCalls, err)
		}
		var ids []string
		for _, c := range calls {
			ids = append(ids, c.ID)
		}
		s += ">" + strings.Join(ids, ",")
	}
	if m.ToolCallID != "" {
		s += "<" + m.ToolCallID
	}
	return s
}

func shapes(t *testing.T, msgs []*carryon.Message) string {
	t.Helper()
	var out []string
	for _, m := range msgs {
		out = append(out, shape(t, m))
	}
	return strings.Join(out, " ")
}
