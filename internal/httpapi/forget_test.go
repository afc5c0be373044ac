package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/carryon-hub/carryon"
)

// After DELETE, a repeat of a write to the session with its request id is a 404 like any other
// request to a missing session, not a replay of the deleted content; a repeat of the DELETE
// itself is answered as the first one was.
func TestReplayAfterDeleteIsNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("to be deleted")
	msgs := "/v1/sessions/" + s.ID + "/messages"
	secret := `{"messages":[{"role":"user","content":"the secret"}]}`
	wantStatus(t, e.json("POST", msgs, e.aliceKey, secret, "Idempotency-Key", "k-append"), http.StatusCreated)
	wantStatus(t, e.json("DELETE", "/v1/sessions/"+s.ID, e.aliceKey, "", "Idempotency-Key", "k-delete"), http.StatusNoContent)
	again := e.json("POST", msgs, e.aliceKey, secret, "Idempotency-Key", "k-append")
	wantProblem(t, again, http.StatusNotFound, carryon.ENOTFOUND)
	if again.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the repeat was replayed: %s", again.body)
	}
	del := e.json("DELETE", "/v1/sessions/"+s.ID, e.aliceKey, "", "Idempotency-Key", "k-delete")
	wantStatus(t, del, http.StatusNoContent)
	if del.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("repeat of the DELETE: Idempotent-Replayed = %q", del.header.Get("Idempotent-Replayed"))
	}
}

// TestChatReplayAfterDelete: a chat's request id belongs to its session, also when the chat made
// the session, so deleting the session forgets it: a repeat of a chat that named the session is a
// 404, and a repeat of one that made it makes a new session instead of answering the deleted one.
func TestChatReplayAfterDelete(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	const task = `{"message":"Write the notes: outline, then draft"}`
	first := decodeBody[carryon.ChatResult](t, e.json("POST", "/v1/chat", e.aliceKey, task, "Idempotency-Key", "k-new"))
	named := `{"session_id":"` + first.SessionID + `","message":"continue the task"}`
	wantStatus(t, e.json("POST", "/v1/chat", e.aliceKey, named, "Idempotency-Key", "k-named"), http.StatusOK)
	wantStatus(t, e.json("DELETE", "/v1/sessions/"+first.SessionID, e.aliceKey, ""), http.StatusNoContent)

	wantProblem(t, e.json("POST", "/v1/chat", e.aliceKey, named, "Idempotency-Key", "k-named"), http.StatusNotFound, carryon.ENOTFOUND)
	again := e.json("POST", "/v1/chat", e.aliceKey, task, "Idempotency-Key", "k-new")
	wantStatus(t, again, http.StatusOK)
	if again.header.Get("Idempotent-Replayed") != "" || decodeBody[carryon.ChatResult](t, again).SessionID == first.SessionID {
		t.Fatalf("the repeat answered the deleted session: %s", again.body)
	}
}
