package runs_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/model/scripted"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// catalog is a fixed set of profiles that all run on one engine.
type catalog struct {
	agents map[string]*carryon.Agent
	eng    *engine.Engine
}

func (c catalog) Agent(name string) (*carryon.Agent, error) {
	if name == "" {
		name = carryon.DefaultAgent
	}
	a, ok := c.agents[name]
	if !ok {
		return nil, carryon.Errorf(carryon.EINVALID, "agent %q is not a profile of this server", name)
	}
	return a, nil
}

func (c catalog) Engine(_ context.Context, name string) (*engine.Engine, error) {
	if _, err := c.Agent(name); err != nil {
		return nil, err
	}
	return c.eng, nil
}

// TestRunRecordsTheProfileItRanWith: a run queued under one agents file and taken by a runner
// started with another records the definition it ran with, and fails clearly when its profile
// is gone; the session's own profile decides runs that name none.
func TestRunRecordsTheProfileItRanWith(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(data, "carryon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	reg, err := tool.NewRegistry(append(workspace.Tools(), tool.UpdateWorkingMemory())...)
	if err != nil {
		t.Fatal(err)
	}
	first := catalog{agents: map[string]*carryon.Agent{
		"default": {Name: "default", Model: "scripted", Digest: "sha256:d1"},
		"writer":  {Name: "writer", Model: "scripted", Digest: "sha256:w1"},
	}}
	sess := sessions.New(st, sessions.Config{Agents: first})
	var rs *runs.Service
	builder := contextbuild.New(contextbuild.Config{}, sess, nil)
	eng := engine.New(engine.Config{Model: "scripted", Workspaces: filepath.Join(data, "workspaces")}, scripted.New(0), reg, builder)
	first.eng = eng
	u := &carryon.User{ID: "usr_alice", Name: "alice"}
	f := &fixture{st: st}
	f.user(t, u.ID, u.Name)
	alice := carryon.NewContextWithUser(context.Background(), u)

	// No runner works for the first manager: its runs stay queued, as across a restart.
	queuing := runs.New(st, sess, nil, runs.Config{Agents: first})
	s, err := sess.Create(alice, carryon.NewSession{Agent: "writer"})
	if err != nil || s.Agent != "writer" {
		t.Fatalf("session %+v, %v", s, err)
	}
	kept, err := queuing.Start(alice, s.ID, carryon.NewRun{Message: "first"})
	if err != nil || kept.Agent != "writer" || kept.AgentDigest != "sha256:w1" {
		t.Fatalf("run %+v, %v", kept, err)
	}
	_, err = queuing.Start(alice, s.ID, carryon.NewRun{Message: "x", Agent: "reviewer"})
	wantCode(t, err, carryon.EINVALID)

	// The next start has writer defined anew: the run records the new digest when it runs.
	second := catalog{eng: eng, agents: map[string]*carryon.Agent{
		"default": {Name: "default", Model: "scripted", Digest: "sha256:d1"},
		"writer":  {Name: "writer", Model: "scripted-2", Digest: "sha256:w2"},
	}}
	rs = runs.New(st, sess, nil, runs.Config{Agents: second, Poll: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { rs.Work(ctx); close(done) }()
	wait := func(id string) *carryon.Run {
		t.Helper()
		wctx, stop := context.WithTimeout(alice, 30*time.Second)
		defer stop()
		r, err := rs.Wait(wctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := wait(kept.ID); r.Status != carryon.RunSucceeded || r.AgentDigest != "sha256:w2" || r.Model != "scripted-2" {
		t.Fatalf("run after the profile changed: %s %q %q (%s)", r.Status, r.AgentDigest, r.Model, r.Error)
	}
	cancel()
	<-done

	// A start whose writer is gone: the queued run fails, saying why.
	gone, err := queuing.Start(alice, s.ID, carryon.NewRun{Message: "second"})
	if err != nil {
		t.Fatal(err)
	}
	third := catalog{eng: eng, agents: map[string]*carryon.Agent{"default": {Name: "default", Model: "scripted", Digest: "sha256:d1"}}}
	rs = runs.New(st, sess, nil, runs.Config{Agents: third, Poll: 20 * time.Millisecond})
	ctx, cancel = context.WithCancel(context.Background())
	done = make(chan struct{})
	go func() { rs.Work(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	if r := wait(gone.ID); r.Status != carryon.RunFailed || !strings.Contains(r.Error, `agent "writer" is not a profile`) {
		t.Fatalf("run whose profile is gone: %s %q", r.Status, r.Error)
	}
	// The session itself still works with a profile the server has.
	r, err := rs.Start(alice, s.ID, carryon.NewRun{Message: "third", Agent: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if r := wait(r.ID); r.Status != carryon.RunSucceeded || r.Agent != "default" {
		t.Fatalf("run naming default: %s %q", r.Status, r.Agent)
	}
}

// TestSessionsWithoutCatalog: a session service given no profiles knows only the default one.
func TestSessionsWithoutCatalog(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	s, err := f.sess.Create(f.alice, carryon.NewSession{})
	if err != nil || s.Agent != carryon.DefaultAgent {
		t.Fatalf("session %+v, %v", s, err)
	}
	_, err = f.sess.Create(f.alice, carryon.NewSession{Agent: "writer"})
	wantCode(t, err, carryon.EINVALID)
	r, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: "hi"})
	if err != nil || r.Agent != carryon.DefaultAgent {
		t.Fatalf("run %+v, %v", r, err)
	}
	_, err = f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: "hi", Agent: "writer"})
	wantCode(t, err, carryon.EINVALID)
	if got := f.wait(t, f.alice, r.ID); got.Status != carryon.RunSucceeded || got.Model != "scripted" {
		t.Fatalf("run %+v", got)
	}
}
