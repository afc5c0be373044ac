package httpapi_test

import (
	"net/http"
	"strconv"
	"strings"
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

// GET /v1/sessions/{id}/messages?include_deleted=true: each page holds the tombstones of the seq
// range it covers (forwards and backwards, a deleted last message included), marked deleted with
// the message's role and kind, the delete's version and no content; without it, or for another user, nothing of them shows.
func TestMessagesIncludeDeleted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("tombstones")
	msgs := "/v1/sessions/" + s.ID + "/messages"
	wantStatus(t, e.json("POST", msgs, e.aliceKey, `{"messages":[{"role":"user","content":"m1"},{"role":"user","content":"secret"},{"role":"user","content":"m3"},{"role":"user","content":"m4"},{"role":"user","content":"last"}]}`), http.StatusCreated)
	wantStatus(t, e.json("DELETE", msgs+"/2", e.aliceKey, ""), http.StatusOK) // version 3
	wantStatus(t, e.json("DELETE", msgs+"/5", e.aliceKey, ""), http.StatusOK) // version 4

	page := func(query string) (items []string, next string) {
		t.Helper()
		r := e.json("GET", msgs+query, e.aliceKey, "")
		wantStatus(t, r, http.StatusOK)
		p := decodeBody[carryon.MessagePage](t, r)
		for _, m := range p.Items {
			it := strconv.FormatInt(m.Seq, 10) + ":" + m.Content
			if m.Deleted {
				if m.Content != "" || m.Role != carryon.RoleUser || m.Kind != carryon.KindMessage || m.CreatedAt.IsZero() {
					t.Fatalf("tombstone %+v carries content, or lacks its role, kind or time", m)
				}
				it = strconv.FormatInt(m.Seq, 10) + ":deleted@v" + strconv.FormatInt(m.Version, 10)
			}
			items = append(items, it)
		}
		return items, p.NextCursor
	}
	for _, c := range []struct {
		query, next string
		want        []string
	}{
		{"?include_deleted=true&limit=2", "3", []string{"1:m1", "2:deleted@v3", "3:m3"}},
		{"?include_deleted=true&limit=2&cursor=3", "", []string{"4:m4", "5:deleted@v4"}},
		{"?include_deleted=true&limit=2&before_seq=6", "3", []string{"3:m3", "4:m4", "5:deleted@v4"}},
		{"?include_deleted=true&limit=2&before_seq=3", "", []string{"1:m1", "2:deleted@v3"}},
		{"?include_deleted=false", "", []string{"1:m1", "3:m3", "4:m4"}},
		{"", "", []string{"1:m1", "3:m3", "4:m4"}},
	} {
		got, next := page(c.query)
		if strings.Join(got, " ") != strings.Join(c.want, " ") || next != c.next {
			t.Errorf("GET messages%s = %v next %q; want %v next %q", c.query, got, next, c.want, c.next)
		}
	}
	if raw := e.json("GET", msgs, e.aliceKey, ""); strings.Contains(string(raw.body), `"deleted"`) {
		t.Fatalf("a listing without include_deleted says %s", raw.body)
	}
	wantProblem(t, e.json("GET", msgs+"?include_deleted=yes", e.aliceKey, ""), http.StatusBadRequest, carryon.EINVALID)
	wantProblem(t, e.json("GET", msgs+"?include_deleted=true", e.bobKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
	// The Go client asks for them too.
	p, err := e.client(e.aliceKey).ListMessages(ctx(t), s.ID, carryon.MessageFilter{IncludeDeleted: true})
	if err != nil || len(p.Items) != 5 || !p.Items[1].Deleted || !p.Items[4].Deleted || p.Items[2].Deleted {
		t.Fatalf("client ListMessages(include deleted) = %+v, %v", p, err)
	}
}
