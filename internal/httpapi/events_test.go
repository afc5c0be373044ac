package httpapi_test

import (
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/poll"
)

// A run that waits (here for a client tool's output) keeps its stream open. Without follow the
// server ends the stream after the events stored so far; HEAD answers the stream's headers at
// once. (Both used to hang until the run ended.)
func TestEventsOfAWaitingRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("waits")
	c := e.client(e.aliceKey)
	run, err := c.Start(ctx(t), s.ID, carryon.NewRun{Message: "/tool ask_user {}", Tools: []carryon.ClientTool{{Name: "ask_user"}}})
	if err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, "the run to require action", func() bool {
		r, err := c.GetRun(ctx(t), run.ID)
		if err != nil {
			t.Fatal(err)
		}
		return r.Status == carryon.RunRequiresAction
	})
	a := e.json("GET", "/v1/runs/"+run.ID+"/events?follow=false", e.aliceKey, "")
	wantStatus(t, a, 200)
	body := string(a.body)
	if !strings.Contains(body, "event: run.requires_action") || strings.Contains(body, "event: run.finished") {
		t.Fatalf("stored events of a waiting run:\n%s", body)
	}
	h := e.json("HEAD", "/v1/runs/"+run.ID+"/events", e.aliceKey, "")
	if h.status != 200 || !strings.HasPrefix(h.header.Get("Content-Type"), "text/event-stream") || len(h.body) != 0 {
		t.Fatalf("HEAD: %d %q %q", h.status, h.header.Get("Content-Type"), h.body)
	}
	wantProblem(t, e.json("GET", "/v1/runs/"+run.ID+"/events?follow=no", e.aliceKey, ""), 400, carryon.EINVALID)
	if h := e.json("HEAD", "/v1/runs/"+run.ID+"/events", e.bobKey, ""); h.status != 404 {
		t.Fatalf("HEAD of another user's run: %d", h.status)
	}

	st, err := c.Events(ctx(t), run.ID, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var last carryon.EventType
	for {
		ev, ok, err := st.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		last = ev.Type
	}
	if last != carryon.EventRunRequiresAction {
		t.Fatalf("the client's stream without follow ended after %s", last)
	}
}
