package aisdk_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/poll"
)

// runOf is the chat's session's newest run.
func (e *env) runOf(t *testing.T, chatID string) *carryon.Run {
	t.Helper()
	page, err := e.sessions.List(e.alice, carryon.SessionFilter{ExternalID: chatID, Limit: 1})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("chat %s: %v, %d sessions", chatID, err, len(page.Items))
	}
	runs, err := e.runs.ListRuns(e.alice, page.Items[0].ID, carryon.RunFilter{Limit: 1})
	if err != nil || len(runs.Items) != 1 {
		t.Fatalf("chat %s: %v, no run", chatID, err)
	}
	return runs.Items[0]
}

// TestChatStreamsTheRun: a user message to a new chat id makes a session with that external id
// and starts a run; the answer is the UI message stream of the run (start with the run id as the
// message id, one step with one text part, finish, [DONE]) and the session holds the message
// and the reply. The same message posted again streams the same run and stores nothing (the
// same message id with another text is refused); a new message goes to the same session.
func TestChatStreamsTheRun(t *testing.T) {
	onStores(t, false, func(t *testing.T, e *env) {
		a := e.chat(t, e.aliceKey, "chat-1", "m1", "hello there", nil)
		wantStream(t, a)
		if got, want := a.types(), "start start-step text-start text-delta text-delta text-delta text-delta text-end finish-step finish"; got != want {
			t.Fatalf("chunks %q, want %q", got, want)
		}
		run := e.runOf(t, "chat-1")
		if a.chunks[0]["messageId"] != run.ID || a.text() != "You said: hello there" || a.first("finish")["finishReason"] != "stop" {
			t.Fatalf("start %v, text %q, finish %v; run %s", a.chunks[0], a.text(), a.first("finish"), run.ID)
		}
		if got := e.messages(t, run.SessionID); !slices.Equal(got, []string{"user: hello there", "assistant: You said: hello there"}) {
			t.Fatalf("session messages %q", got)
		}
		again := e.chat(t, e.aliceKey, "chat-1", "m1", "hello there", nil)
		wantStream(t, again)
		if again.types() != a.types() || again.chunks[0]["messageId"] != run.ID || len(e.messages(t, run.SessionID)) != 2 {
			t.Fatalf("the repeat streamed %q (%v); the session holds %d messages", again.types(), again.chunks[0], len(e.messages(t, run.SessionID)))
		}
		// The same message id with another text is another request under the same key: refused.
		wantProblem(t, e.chat(t, e.aliceKey, "chat-1", "m1", "something else", nil), 422, "")
		if n := len(e.messages(t, run.SessionID)); n != 2 {
			t.Fatalf("the session holds %d messages after a refused repeat", n)
		}
		next := e.chat(t, e.aliceKey, "chat-1", "m2", "and again", nil)
		wantStream(t, next)
		if next.chunks[0]["messageId"] == run.ID || next.text() != "You said: and again" || e.sessionCount(t) != 1 {
			t.Fatalf("the second message: %v %q; %d sessions", next.chunks[0], next.text(), e.sessionCount(t))
		}
		// The chat id may be the session's own id too.
		byID := e.chat(t, e.aliceKey, run.SessionID, "m3", "by id", nil)
		wantStream(t, byID)
		if byID.text() != "You said: by id" || e.sessionCount(t) != 1 {
			t.Fatalf("by session id: %q; %d sessions", byID.text(), e.sessionCount(t))
		}
	})
}

// TestResume: GET …/{id}/stream replays the active run's stream from its start, the same
// chunks as the POST's stream with the same message id; 204 once no run is active; 404 for a
// chat id that names no session of the caller's, another user's included.
func TestResume(t *testing.T) {
	onStores(t, false, func(t *testing.T, e *env) {
		if a := e.do(t, e.aliceKey, "GET", "/v1/ai-sdk/chat/nope/stream", nil); a.status != 404 {
			t.Fatalf("resume of a missing chat: %d %s", a.status, a.body)
		}
		posted := make(chan answer, 1)
		go func() { posted <- e.chat(t, e.aliceKey, "chat-r", "m1", "please hang", nil) }()
		var run *carryon.Run
		poll.Eventually(t, "the run to start", func() bool {
			page, _ := e.sessions.List(e.alice, carryon.SessionFilter{ExternalID: "chat-r", Limit: 1})
			if page == nil || len(page.Items) == 0 {
				return false
			}
			runs, _ := e.runs.ListRuns(e.alice, page.Items[0].ID, carryon.RunFilter{Limit: 1})
			if runs == nil || len(runs.Items) == 0 || runs.Items[0].Status != carryon.RunRunning {
				return false
			}
			run = runs.Items[0]
			return true
		})
		for _, id := range []string{"chat-r", run.SessionID} {
			if a := e.do(t, e.bobKey, "GET", "/v1/ai-sdk/chat/"+id+"/stream", nil); a.status != 404 {
				t.Fatalf("bob resuming alice's chat %s: %d %s", id, a.status, a.body)
			}
		}
		req, _ := http.NewRequest("GET", e.url+"/v1/ai-sdk/chat/chat-r/stream", nil)
		req.Header.Set("Authorization", "Bearer "+e.aliceKey)
		res, err := http.DefaultClient.Do(req) // the answer's header came: the stream follows the run
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.runs.Cancel(e.alice, run.ID, carryon.RetryOptions{}); err != nil {
			t.Fatal(err)
		}
		a, b := <-posted, read(t, res)
		wantStream(t, a)
		wantStream(t, b)
		if a.types() != b.types() || b.chunks[0]["messageId"] != run.ID || a.chunks[len(a.chunks)-1]["type"] != "abort" {
			t.Fatalf("posted %q (%v), resumed %q (%v)", a.types(), a.chunks[0], b.types(), b.chunks[0])
		}
		if a := e.do(t, e.aliceKey, "GET", "/v1/ai-sdk/chat/chat-r/stream", nil); a.status != 204 || a.body != "" {
			t.Fatalf("resume with no active run: %d %q", a.status, a.body)
		}
	})
}

// TestShutdownCutsTheStream: a server shutting down ends an open stream without [DONE] (the
// client sees it cut and resumes), and the run goes on.
func TestShutdownCutsTheStream(t *testing.T) {
	onStores(t, false, func(t *testing.T, e *env) {
		req, _ := http.NewRequest("POST", e.url+"/v1/ai-sdk/chat", strings.NewReader(`{"id":"chat-s","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"please hang"}]}]}`))
		req.Header.Set("Authorization", "Bearer "+e.aliceKey)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req) // the header came: the stream follows the run
		if err != nil {
			t.Fatal(err)
		}
		e.shutdown()
		a := read(t, res)
		if a.status != 200 || a.done || len(a.chunks) == 0 || a.chunks[0]["type"] != "start" {
			t.Fatalf("the cut stream: %d, done %v, %q", a.status, a.done, a.types())
		}
		if run := e.runOf(t, "chat-s"); !run.Status.Active() {
			t.Fatalf("the run is %s after the stream was cut", run.Status)
		}
	})
}
