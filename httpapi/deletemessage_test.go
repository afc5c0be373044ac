package httpapi_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/carryon-hub/carryon"
)

// DELETE /v1/sessions/{id}/messages/{seq}: the session back at its next version with an ETag,
// If-Match and Idempotency-Key honoured, another user's session and an unknown seq a 404, a seq
// that is no number a 400; reads and forks made afterwards no longer see the message.
func TestDeleteMessageRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("redact one")
	msgs := "/v1/sessions/" + s.ID + "/messages"
	wantStatus(t, e.json("POST", msgs, e.aliceKey, `{"messages":[{"role":"user","content":"keep"},{"role":"user","content":"my password is hunter2"},{"role":"user","content":"keep too"}]}`), http.StatusCreated)
	earlier := decodeBody[carryon.Session](t, e.json("POST", "/v1/sessions/"+s.ID+"/fork", e.aliceKey, ""))

	wantProblem(t, e.json("DELETE", msgs+"/2", e.aliceKey, "", "If-Match", `"1"`), http.StatusPreconditionFailed, carryon.EVERSION)
	wantProblem(t, e.json("DELETE", msgs+"/2", e.bobKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
	wantProblem(t, e.json("DELETE", msgs+"/9", e.aliceKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
	wantProblem(t, e.json("DELETE", msgs+"/two", e.aliceKey, ""), http.StatusBadRequest, carryon.EINVALID)

	del := e.json("DELETE", msgs+"/2", e.aliceKey, "", "If-Match", `"2"`, "Idempotency-Key", "redact-2")
	wantStatus(t, del, http.StatusOK)
	got := decodeBody[carryon.Session](t, del)
	if got.Version != 3 || got.MessageCount != 2 || del.header.Get("ETag") != `"3"` {
		t.Fatalf("delete answered version %d, count %d, ETag %s; want 3, 2, \"3\"", got.Version, got.MessageCount, del.header.Get("ETag"))
	}
	again := e.json("DELETE", msgs+"/2", e.aliceKey, "", "If-Match", `"2"`, "Idempotency-Key", "redact-2")
	wantStatus(t, again, http.StatusOK)
	if again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("repeat not replayed: %v", again.header)
	}
	wantProblem(t, e.json("DELETE", msgs+"/2", e.aliceKey, ""), http.StatusNotFound, carryon.ENOTFOUND)

	contentsOf := func(id string) []string {
		page := decodeBody[carryon.MessagePage](t, e.json("GET", "/v1/sessions/"+id+"/messages", e.aliceKey, ""))
		var out []string
		for _, m := range page.Items {
			out = append(out, strconv.FormatInt(m.Seq, 10)+":"+m.Content)
		}
		return out
	}
	if got := contentsOf(s.ID); len(got) != 2 || got[0] != "1:keep" || got[1] != "3:keep too" {
		t.Fatalf("session reads %v", got)
	}
	if got := contentsOf(earlier.ID); len(got) != 3 {
		t.Fatalf("the fork made before the delete reads %v, want all three", got)
	}
	later := decodeBody[carryon.Session](t, e.json("POST", "/v1/sessions/"+s.ID+"/fork", e.aliceKey, ""))
	if got := contentsOf(later.ID); len(got) != 2 {
		t.Fatalf("the fork made after the delete reads %v, want two", got)
	}
	// The Go client says the same.
	c := e.client(e.aliceKey)
	sess, err := c.DeleteMessage(ctx(t), s.ID, 3, carryon.WriteOptions{RequestID: "redact-3"})
	if err != nil || sess.Version != 4 || sess.MessageCount != 1 {
		t.Fatalf("client delete = %+v, %v; want version 4, one message", sess, err)
	}
	_, err = c.DeleteMessage(ctx(t), s.ID, 3, carryon.WriteOptions{})
	if carryon.ErrorCode(err) != carryon.ENOTFOUND {
		t.Fatalf("client delete again = %v, want not_found", err)
	}
}
