package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
)

func TestAgentsList(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	wantProblem(t, e.json("GET", "/v1/agents", "", ""), http.StatusUnauthorized, "unauthorized")
	list := decodeBody[carryon.AgentList](t, e.json("GET", "/v1/agents", e.aliceKey, ""))
	if len(list.Items) != 2 || list.Items[0].Name != "default" || list.Items[1].Name != "writer" {
		t.Fatalf("agents %+v", list.Items)
	}
	w := list.Items[1]
	want, _ := e.agents.Agent("writer")
	if w.Digest != want.Digest || w.Model != "scripted-writer" || w.ProviderKind != "scripted" || w.Instructions != "Write plainly." {
		t.Fatalf("writer %+v", w)
	}
	if len(w.Tools) != 2 || w.Tools[0] != (carryon.AgentTool{Name: "write_file", Effect: carryon.EffectReconcilable, Approval: "always"}) ||
		w.Tools[1] != (carryon.AgentTool{Name: "update_working_memory", Effect: carryon.EffectIdempotent, Approval: "never"}) {
		t.Fatalf("writer's tools %+v", w.Tools)
	}
	if list.Items[0].Digest == w.Digest {
		t.Fatal("two profiles share a digest")
	}
}

func TestSessionBoundToAgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	def := e.newSession("plain")
	if def.Agent != "default" {
		t.Fatalf("a session that names no agent is bound to %q", def.Agent)
	}
	a := e.json("POST", "/v1/sessions", e.aliceKey, `{"title":"w","agent":"writer"}`)
	wantStatus(t, a, http.StatusCreated)
	ws := decodeBody[carryon.Session](t, a)
	if ws.Agent != "writer" {
		t.Fatalf("session agent %q", ws.Agent)
	}
	got := decodeBody[carryon.SessionView](t, e.json("GET", "/v1/sessions/"+ws.ID, e.aliceKey, ""))
	if got.Agent != "writer" {
		t.Fatalf("read back agent %q", got.Agent)
	}
	// A fork keeps the profile.
	fork := decodeBody[carryon.Session](t, e.json("POST", "/v1/sessions/"+ws.ID+"/fork", e.aliceKey, `{}`))
	if fork.Agent != "writer" {
		t.Fatalf("fork agent %q", fork.Agent)
	}

	// A run on the writer's session runs the writer and records its digest.
	writer, _ := e.agents.Agent("writer")
	r := decodeBody[carryon.Run](t, e.json("POST", "/v1/sessions/"+ws.ID+"/runs", e.aliceKey, `{"message":"hello"}`))
	if r.Agent != "writer" || r.AgentDigest != writer.Digest || r.Model != "scripted-writer" {
		t.Fatalf("run %+v", r)
	}
	done := waitFinished(t, e, r.ID)
	if done.Agent != "writer" || done.AgentDigest != writer.Digest || done.Status != carryon.RunSucceeded {
		t.Fatalf("finished run: agent %q digest %q status %s", done.Agent, done.AgentDigest, done.Status)
	}
	// A run may name another profile; the session stays bound to its own.
	defAgent, _ := e.agents.Agent("default")
	r = decodeBody[carryon.Run](t, e.json("POST", "/v1/sessions/"+ws.ID+"/runs", e.aliceKey, `{"message":"again","agent":"default"}`))
	if done := waitFinished(t, e, r.ID); done.Agent != "default" || done.AgentDigest != defAgent.Digest || done.Model != "scripted" {
		t.Fatalf("run naming default: %+v", done)
	}
	// Another user sees none of it.
	wantProblem(t, e.json("GET", "/v1/runs/"+r.ID, e.bobKey, ""), http.StatusNotFound, "not_found")
	wantProblem(t, e.json("POST", "/v1/sessions/"+ws.ID+"/runs", e.bobKey, `{"message":"mine?","agent":"writer"}`), http.StatusNotFound, "not_found")
}

func TestUnknownAgentStoresNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	knows := func(t *testing.T, a *answer) {
		t.Helper()
		wantProblem(t, a, http.StatusBadRequest, "invalid_request")
		if !strings.Contains(a.problem.Detail, `"researcher"`) || !strings.Contains(a.problem.Detail, "default, writer") {
			t.Fatalf("detail %q does not name the profile and the known ones", a.problem.Detail)
		}
	}
	knows(t, e.json("POST", "/v1/sessions", e.aliceKey, `{"title":"x","agent":"researcher"}`, "Idempotency-Key", "create-1"))
	knows(t, e.json("POST", "/v1/chat", e.aliceKey, `{"message":"hi","agent":"researcher"}`))
	if page := decodeBody[carryon.SessionPage](t, e.json("GET", "/v1/sessions", e.aliceKey, "")); len(page.Items) != 0 {
		t.Fatalf("refused creates left %d sessions", len(page.Items))
	}
	// The refused request's id stays free for the corrected retry.
	wantStatus(t, e.json("POST", "/v1/sessions", e.aliceKey, `{"title":"x","agent":"writer"}`, "Idempotency-Key", "create-1"), http.StatusCreated)

	s := e.newSession("runs")
	knows(t, e.json("POST", "/v1/sessions/"+s.ID+"/runs", e.aliceKey, `{"message":"hi","agent":"researcher"}`))
	knows(t, e.json("POST", "/v1/chat", e.aliceKey, `{"session_id":"`+s.ID+`","message":"hi","agent":"researcher"}`))
	view := decodeBody[carryon.SessionView](t, e.json("GET", "/v1/sessions/"+s.ID, e.aliceKey, ""))
	runs := decodeBody[carryon.RunPage](t, e.json("GET", "/v1/sessions/"+s.ID+"/runs", e.aliceKey, ""))
	if view.Version != s.Version || view.MessageCount != 0 || len(runs.Items) != 0 {
		t.Fatalf("refused runs wrote: version %d→%d, %d messages, %d runs", s.Version, view.Version, view.MessageCount, len(runs.Items))
	}
}

func TestChatWithAgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	res := decodeBody[carryon.ChatResult](t, e.json("POST", "/v1/chat", e.aliceKey, `{"message":"hello","agent":"writer"}`))
	sess := decodeBody[carryon.SessionView](t, e.json("GET", "/v1/sessions/"+res.SessionID, e.aliceKey, ""))
	run := decodeBody[carryon.Run](t, e.json("GET", "/v1/runs/"+res.RunID, e.aliceKey, ""))
	if sess.Agent != "writer" || run.Agent != "writer" || res.Status != carryon.RunSucceeded {
		t.Fatalf("chat with writer: session %q run %q status %s", sess.Agent, run.Agent, res.Status)
	}
}

func TestClientAgents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	c := e.client(e.aliceKey)
	list, err := c.ListAgents(t.Context())
	if err != nil || len(list.Items) != 2 || list.Items[1].Name != "writer" {
		t.Fatalf("list %+v, %v", list, err)
	}
	s, err := c.Create(t.Context(), carryon.NewSession{Agent: "writer"})
	if err != nil || s.Agent != "writer" {
		t.Fatalf("create %+v, %v", s, err)
	}
	_, err = c.Start(t.Context(), s.ID, carryon.NewRun{Message: "hi", Agent: "nobody"})
	if carryon.ErrorCode(err) != carryon.EINVALID || !strings.Contains(carryon.ErrorMessage(err), "default, writer") {
		t.Fatalf("start with an unknown agent: %v", err)
	}
	if _, err := e.client("").ListAgents(t.Context()); carryon.ErrorCode(err) != carryon.EUNAUTHORIZED {
		t.Fatalf("list without a key: %v", err)
	}
}
