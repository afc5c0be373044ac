package httpapi_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/wire"
)

// wantReplay checks that again is the stored first answer: same status, same body, and
// Idempotent-Replayed: true.
func wantReplay(t *testing.T, first, again *answer) {
	t.Helper()
	if again.status != first.status || !bytes.Equal(again.body, first.body) {
		t.Fatalf("repeat answered %d %s, want the first answer %d %s", again.status, again.body, first.status, first.body)
	}
	if first.header.Get("Idempotent-Replayed") != "" || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("Idempotent-Replayed: first %q, repeat %q", first.header.Get("Idempotent-Replayed"), again.header.Get("Idempotent-Replayed"))
	}
}

// Writes whose target has no version honour Idempotency-Key (and request_id) like the session
// writes: a repeat answers the first answer with Idempotent-Replayed, the same key with another
// request is 422.
func TestRetryWithoutVersions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("retries")
	a := e.json("POST", "/v1/sessions/"+s.ID+"/runs", e.aliceKey, `{"message":"`+task+`"}`)
	wantStatus(t, a, http.StatusAccepted)
	runA := decodeBody[carryon.Run](t, a)
	waitFinished(t, e, runA.ID)
	b := e.json("POST", "/v1/sessions/"+s.ID+"/runs", e.aliceKey, `{"message":"continue the task"}`)
	wantStatus(t, b, http.StatusAccepted)
	runB := decodeBody[carryon.Run](t, b)
	waitFinished(t, e, runB.ID)

	t.Run("cancel", func(t *testing.T) {
		first := e.json("POST", "/v1/runs/"+runA.ID+"/cancel", e.aliceKey, "", "Idempotency-Key", "cancel-1")
		wantStatus(t, first, http.StatusOK)
		wantReplay(t, first, e.json("POST", "/v1/runs/"+runA.ID+"/cancel", e.aliceKey, "", "Idempotency-Key", "cancel-1"))
		wantReplay(t, first, e.json("POST", "/v1/runs/"+runA.ID+"/cancel", e.aliceKey, `{"request_id":"cancel-1"}`))
		wantProblem(t, e.json("POST", "/v1/runs/"+runB.ID+"/cancel", e.aliceKey, "", "Idempotency-Key", "cancel-1"), http.StatusUnprocessableEntity, carryon.EKEYREUSED)
	})
	t.Run("memory put", func(t *testing.T) {
		path := "/v1/memories/prefs/editor"
		first := e.json("PUT", path, e.aliceKey, `{"value":"vim"}`, "Idempotency-Key", "put-1")
		wantStatus(t, first, http.StatusOK)
		// Another put in between: a repeat still answers what the first put stored.
		wantStatus(t, e.json("PUT", path, e.aliceKey, `{"value":"emacs"}`), http.StatusOK)
		wantReplay(t, first, e.json("PUT", path, e.aliceKey, `{"value":"vim"}`, "Idempotency-Key", "put-1"))
		wantReplay(t, first, e.json("PUT", path, e.aliceKey, `{"value":"vim","request_id":"put-1"}`))
		wantProblem(t, e.json("PUT", path, e.aliceKey, `{"value":"nano"}`, "Idempotency-Key", "put-1"), http.StatusUnprocessableEntity, carryon.EKEYREUSED)
		if got := decodeBody[carryon.LongTermItem](t, e.json("GET", path, e.aliceKey, "")); string(got.Value) != `"emacs"` {
			t.Fatalf("the replays changed the item: %s", got.Value)
		}
	})
	t.Run("memory delete", func(t *testing.T) {
		path := "/v1/memories/prefs/theme"
		wantStatus(t, e.json("PUT", path, e.aliceKey, `{"value":"dark"}`), http.StatusOK)
		first := e.json("DELETE", path, e.aliceKey, "", "Idempotency-Key", "del-1")
		wantStatus(t, first, http.StatusNoContent)
		wantReplay(t, first, e.json("DELETE", path, e.aliceKey, "", "Idempotency-Key", "del-1"))
		wantProblem(t, e.json("DELETE", path, e.aliceKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
		wantProblem(t, e.json("DELETE", "/v1/memories/prefs/editor", e.aliceKey, "", "Idempotency-Key", "del-1"), http.StatusUnprocessableEntity, carryon.EKEYREUSED)
	})
	t.Run("key revoke", func(t *testing.T) {
		k := decodeBody[wire.CreateKeyResponse](t, e.json("POST", "/v1/users/bob/keys", e.adminKey, ""))
		first := e.json("DELETE", "/v1/keys/"+k.Key.ID, e.adminKey, "", "Idempotency-Key", "revoke-1")
		wantStatus(t, first, http.StatusNoContent)
		wantReplay(t, first, e.json("DELETE", "/v1/keys/"+k.Key.ID, e.adminKey, "", "Idempotency-Key", "revoke-1"))
		wantProblem(t, e.json("GET", "/v1/me", k.Secret, ""), http.StatusUnauthorized, carryon.EUNAUTHORIZED)
	})
}

// A write control that cannot mean anything on a route is refused with a 400 that says why,
// never ignored: If-Match where there is no version, Idempotency-Key where there is no answer to
// replay, expected_version on a new session. Nothing is written.
func TestControlsThatCannotApplyAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("controls")
	run := decodeBody[carryon.Run](t, e.json("POST", "/v1/sessions/"+s.ID+"/runs", e.aliceKey, `{"message":"`+task+`"}`))
	waitFinished(t, e, run.ID)
	for _, c := range []struct {
		method, path, key, body string
		header                  []string
		detail                  string
	}{
		{"POST", "/v1/runs/" + run.ID + "/cancel", e.aliceKey, "", []string{"If-Match", `"1"`}, "a run has no version"},
		{"POST", "/v1/runs/" + run.ID + "/approve", e.aliceKey, `{"action_id":"act_x","decision":"skip"}`, []string{"If-Match", `"1"`}, "a run has no version"},
		{"POST", "/v1/sessions", e.aliceKey, `{}`, []string{"If-Match", `"1"`}, "a new session has no version yet"},
		{"POST", "/v1/sessions", e.aliceKey, `{"expected_version":1}`, nil, "a new session has none"},
		{"POST", "/v1/users", e.adminKey, `{"name":"carol"}`, []string{"Idempotency-Key", "u-1"}, "secret"},
		{"POST", "/v1/users", e.adminKey, `{"name":"carol"}`, []string{"If-Match", `"1"`}, "users and keys have no version"},
		{"POST", "/v1/users/alice/keys", e.adminKey, "", []string{"Idempotency-Key", "k-1"}, "secret"},
		{"DELETE", "/v1/users/nobody", e.adminKey, "", []string{"Idempotency-Key", "f-1"}, "forgetting a user is many transactions"},
		{"DELETE", "/v1/keys/key_x", e.adminKey, "", []string{"If-Match", `"1"`}, "users and keys have no version"},
		{"GET", "/v1/sessions/" + s.ID, e.aliceKey, "", []string{"Idempotency-Key", "g-1"}, "it is a read"},
		{"GET", "/v1/sessions/" + s.ID + "/messages", e.aliceKey, "", []string{"If-Match", `"1"`}, "it is a read"},
		{"POST", "/v1/memories/search", e.aliceKey, `{"query":"x"}`, []string{"Idempotency-Key", "q-1"}, "it is a read"},
	} {
		a := e.json(c.method, c.path, c.key, c.body, c.header...)
		wantProblem(t, a, http.StatusBadRequest, carryon.EINVALID)
		if !strings.Contains(a.problem.Detail, c.detail) {
			t.Errorf("%s %s %v: detail %q does not say %q", c.method, c.path, c.header, a.problem.Detail, c.detail)
		}
	}
	if users := decodeBody[wire.UserList](t, e.json("GET", "/v1/users", e.adminKey, "")); len(users.Items) != 3 {
		t.Errorf("%d users after refused creations, want 3", len(users.Items))
	}
	if page := decodeBody[carryon.SessionPage](t, e.json("GET", "/v1/sessions", e.aliceKey, "")); len(page.Items) != 1 {
		t.Errorf("%d sessions after refused creations, want 1", len(page.Items))
	}
	if a := e.json("GET", "/v1/memories/prefs/editor", e.aliceKey, ""); a.status != http.StatusNotFound {
		t.Errorf("a refused put stored the item: %d %s", a.status, a.body)
	}
}

// A PATCH that changes nothing stores nothing: the version and the idle clock stay. Metadata is
// replaced as a whole, not merged.
func TestSessionPatchThatChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	a := e.json("POST", "/v1/sessions", e.aliceKey, `{"title":"same","metadata":{"a":1,"b":2},"idle_ttl_seconds":3600}`)
	wantStatus(t, a, http.StatusCreated)
	s := decodeBody[carryon.Session](t, a)
	path := "/v1/sessions/" + s.ID
	for _, body := range []string{`{"title":"same"}`, `{"metadata":{"a":1,"b":2}}`, `{"idle_ttl_seconds":3600}`, `{"title":"same","metadata":{"a":1, "b":2},"idle_ttl_seconds":3600}`} {
		a := e.json("PATCH", path, e.aliceKey, body, "If-Match", etag(s.Version))
		wantStatus(t, a, http.StatusOK)
		got := decodeBody[carryon.Session](t, a)
		if got.Version != s.Version || a.header.Get("ETag") != etag(s.Version) || !got.UpdatedAt.Equal(s.UpdatedAt) || !got.ExpiresAt.Equal(s.ExpiresAt) {
			t.Fatalf("PATCH %s changed nothing but moved the session: version %d → %d, updated %v → %v", body, s.Version, got.Version, s.UpdatedAt, got.UpdatedAt)
		}
	}
	a = e.json("PATCH", path, e.aliceKey, `{"metadata":{"c":3}}`, "If-Match", etag(s.Version))
	wantStatus(t, a, http.StatusOK)
	got := decodeBody[carryon.Session](t, a)
	if got.Version != s.Version+1 || string(got.Metadata) != `{"c":3}` {
		t.Fatalf("metadata patch: version %d, metadata %s; want %d and the new object alone", got.Version, got.Metadata, s.Version+1)
	}
	// A stale version is still refused when nothing would change.
	wantProblem(t, e.json("PATCH", path, e.aliceKey, `{"title":"same"}`, "If-Match", etag(s.Version)), http.StatusPreconditionFailed, carryon.EVERSION)
}

// A chat is a write to its session like a run: If-Match and --require-version apply when it
// names a session; a new session needs no version.
func TestChatVersions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *httpapi.Config) { c.RequireVersion = true })
	first := e.json("POST", "/v1/chat", e.aliceKey, `{"message":"`+task+`"}`)
	wantStatus(t, first, http.StatusOK)
	id := decodeBody[carryon.ChatResult](t, first).SessionID
	v := decodeBody[carryon.Session](t, e.json("GET", "/v1/sessions/"+id, e.aliceKey, "")).Version
	if v < 3 {
		t.Fatalf("session at version %d after a chat", v)
	}
	body := `{"session_id":"` + id + `","message":"continue the task"}`
	wantProblem(t, e.json("POST", "/v1/chat", e.aliceKey, body), http.StatusPreconditionRequired, carryon.EVERSIONNEEDED)
	a := e.json("POST", "/v1/chat", e.aliceKey, body, "If-Match", `"1"`)
	wantProblem(t, a, http.StatusPreconditionFailed, carryon.EVERSION)
	if a.problem.CurrentVersion == nil || *a.problem.CurrentVersion != v {
		t.Fatalf("current_version %v, want %d", a.problem.CurrentVersion, v)
	}
	wantProblem(t, e.json("POST", "/v1/chat", e.aliceKey, fmt.Sprintf(`{"session_id":%q,"message":"go on","expected_version":1}`, id)), http.StatusConflict, carryon.EVERSION)
	wantProblem(t, e.json("POST", "/v1/chat", e.aliceKey, `{"message":"new one"}`, "If-Match", `"1"`), http.StatusBadRequest, carryon.EINVALID)
	if now := decodeBody[carryon.Session](t, e.json("GET", "/v1/sessions/"+id, e.aliceKey, "")).Version; now != v {
		t.Fatalf("refused chats moved the session from version %d to %d", v, now)
	}
	wantStatus(t, e.json("POST", "/v1/chat", e.aliceKey, body, "If-Match", etag(v)), http.StatusOK)
}

// A chat's replay is its first answer byte for byte, with Idempotent-Replayed, even after the
// session moved on. A refused chat creates nothing and leaves its request id free; the internal
// names of a chat's writes never show; a request id of the full 255 bytes works.
func TestChatRetries(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	sessions := func() int {
		return len(decodeBody[carryon.SessionPage](t, e.json("GET", "/v1/sessions", e.aliceKey, "")).Items)
	}
	key := strings.Repeat("k", carryon.MaxRequestIDLength)
	for _, bad := range []string{`{"message":""}`, `{"message":"` + strings.Repeat("x", 1<<20+1) + `"}`} {
		wantProblem(t, e.json("POST", "/v1/chat", e.aliceKey, bad, "Idempotency-Key", key), http.StatusBadRequest, carryon.EINVALID)
	}
	if n := sessions(); n != 0 {
		t.Fatalf("refused chats made %d sessions", n)
	}
	first := e.json("POST", "/v1/chat", e.aliceKey, `{"message":"`+task+`"}`, "Idempotency-Key", key)
	wantStatus(t, first, http.StatusOK)
	res := decodeBody[carryon.ChatResult](t, first)
	if res.Status != carryon.RunSucceeded || res.Reply == "" {
		t.Fatalf("chat: %s", first.body)
	}
	// The session moves on; a repeat still answers exactly what the first chat answered.
	wantStatus(t, e.json("PATCH", "/v1/sessions/"+res.SessionID+"/memory", e.aliceKey, `{"patch":{"goal":"something else"}}`), http.StatusOK)
	wantReplay(t, first, e.json("POST", "/v1/chat", e.aliceKey, `{"message":"`+task+`"}`, "Idempotency-Key", key))
	wantReplay(t, first, e.json("POST", "/v1/chat", e.aliceKey, `{"message":"`+task+`","request_id":"`+key+`"}`))
	if n := sessions(); n != 1 {
		t.Fatalf("a chat and its replays made %d sessions", n)
	}
	a := e.json("POST", "/v1/chat", e.aliceKey, `{"message":"another task"}`, "Idempotency-Key", key)
	wantProblem(t, a, http.StatusUnprocessableEntity, carryon.EKEYREUSED)
	if strings.Contains(a.problem.Detail, "chat-") || !strings.Contains(a.problem.Detail, key) {
		t.Fatalf("detail %q: want the caller's own request id and nothing internal", a.problem.Detail)
	}

	// On an existing session too.
	body := `{"session_id":"` + res.SessionID + `","message":"continue the task"}`
	again := e.json("POST", "/v1/chat", e.aliceKey, body, "Idempotency-Key", "next")
	wantStatus(t, again, http.StatusOK)
	wantStatus(t, e.json("PATCH", "/v1/sessions/"+res.SessionID+"/memory", e.aliceKey, `{"patch":{"goal":"yet another"}}`), http.StatusOK)
	wantReplay(t, again, e.json("POST", "/v1/chat", e.aliceKey, body, "Idempotency-Key", "next"))
}
