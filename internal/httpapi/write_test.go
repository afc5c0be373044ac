package httpapi_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/httpapi"
)

const hello = `{"messages":[{"role":"user","content":"hello"}]}`

// A stale If-Match answers 412 with the current version; a stale expected_version answers 409;
// nothing is written either way.
func TestStaleVersions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("versions")
	msgs := "/v1/sessions/" + s.ID + "/messages"
	a := e.json("POST", msgs, e.aliceKey, hello, "If-Match", etag(s.Version))
	wantStatus(t, a, http.StatusCreated)
	now := decodeBody[carryon.AppendResult](t, a).Version
	if a.header.Get("ETag") != etag(now) || now != s.Version+1 {
		t.Fatalf("ETag %q after append to version %d", a.header.Get("ETag"), now)
	}

	for _, tag := range []string{etag(s.Version), "W/" + etag(s.Version), strconv.FormatInt(s.Version, 10)} {
		a = e.json("POST", msgs, e.aliceKey, hello, "If-Match", tag)
		wantProblem(t, a, http.StatusPreconditionFailed, carryon.EVERSION)
		if a.problem.CurrentVersion == nil || *a.problem.CurrentVersion != now {
			t.Fatalf("If-Match %s: current_version = %v, want %d", tag, a.problem.CurrentVersion, now)
		}
	}
	a = e.json("POST", msgs, e.aliceKey, fmt.Sprintf(`{"messages":[{"role":"user","content":"x"}],"expected_version":%d}`, s.Version))
	wantProblem(t, a, http.StatusConflict, carryon.EVERSION)
	if a.problem.CurrentVersion == nil || *a.problem.CurrentVersion != now {
		t.Fatalf("expected_version: current_version = %v, want %d", a.problem.CurrentVersion, now)
	}
	a = e.json("PATCH", "/v1/sessions/"+s.ID+"/memory", e.aliceKey, `{"patch":{"goal":"g"}}`, "If-Match", etag(s.Version))
	wantProblem(t, a, http.StatusPreconditionFailed, carryon.EVERSION)
	a = e.json("POST", "/v1/sessions/"+s.ID+"/close", e.aliceKey, "", "If-Match", etag(s.Version))
	wantProblem(t, a, http.StatusPreconditionFailed, carryon.EVERSION)

	// If-Match and expected_version that disagree, or an If-Match that is no version: 400.
	a = e.json("POST", msgs, e.aliceKey, fmt.Sprintf(`{"messages":[],"expected_version":%d}`, now), "If-Match", etag(now+1))
	wantProblem(t, a, http.StatusBadRequest, carryon.EINVALID)
	for _, bad := range []string{`"abc"`, `"1", "2"`, `-1`} {
		wantProblem(t, e.json("POST", msgs, e.aliceKey, hello, "If-Match", bad), http.StatusBadRequest, carryon.EINVALID)
	}
	// If-Match: * is any version.
	wantStatus(t, e.json("POST", msgs, e.aliceKey, hello, "If-Match", "*"), http.StatusCreated)

	view := decodeBody[carryon.SessionView](t, e.json("GET", "/v1/sessions/"+s.ID, e.aliceKey, ""))
	if view.MessageCount != 2 || view.Version != now+1 || view.Status != carryon.SessionActive {
		t.Errorf("after refused writes: %d messages, version %d, %s; want 2, %d, active", view.MessageCount, view.Version, view.Status, now+1)
	}
}

// A repeated request id answers the first answer byte for byte with Idempotent-Replayed and
// appends nothing; the header and the body field mean the same; another body is 422.
func TestIdempotentReplay(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("replay")
	msgs := "/v1/sessions/" + s.ID + "/messages"
	first := e.json("POST", msgs, e.aliceKey, hello, "Idempotency-Key", "k-1")
	wantStatus(t, first, http.StatusCreated)
	if first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first answer says Idempotent-Replayed: %q", first.header.Get("Idempotent-Replayed"))
	}
	for _, again := range []*answer{
		e.json("POST", msgs, e.aliceKey, hello, "Idempotency-Key", "k-1"),
		e.json("POST", msgs, e.aliceKey, hello, "Idempotency-Key", `"k-1"`),
		e.json("POST", msgs, e.aliceKey, `{"messages":[{"role":"user","content":"hello"}],"request_id":"k-1"}`),
		e.json("POST", msgs, e.aliceKey, `{"messages":[{"role":"user","content":"hello"}],"request_id":"k-1"}`, "Idempotency-Key", "k-1"),
	} {
		wantStatus(t, again, http.StatusCreated)
		if again.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay without Idempotent-Replayed: true")
		}
		if !bytes.Equal(again.body, first.body) {
			t.Errorf("replay body differs:\n first %s\nreplay %s", first.body, again.body)
		}
		for _, h := range []string{"ETag", "Location", "Content-Type"} {
			if again.header.Get(h) != first.header.Get(h) {
				t.Errorf("replay %s = %q, first %q", h, again.header.Get(h), first.header.Get(h))
			}
		}
	}
	a := e.json("POST", msgs, e.aliceKey, `{"messages":[{"role":"user","content":"other"}]}`, "Idempotency-Key", "k-1")
	wantProblem(t, a, http.StatusUnprocessableEntity, carryon.EKEYREUSED)
	a = e.json("POST", msgs, e.aliceKey, `{"messages":[{"role":"user","content":"hello"}],"request_id":"k-2"}`, "Idempotency-Key", "k-1")
	wantProblem(t, a, http.StatusBadRequest, carryon.EINVALID)

	view := decodeBody[carryon.SessionView](t, e.json("GET", "/v1/sessions/"+s.ID, e.aliceKey, ""))
	if view.MessageCount != 1 {
		t.Errorf("%d messages after one append and its replays, want 1", view.MessageCount)
	}
	// Keys are per user: bob may use the same key for his own session.
	bobs := decodeBody[carryon.Session](t, e.json("POST", "/v1/sessions", e.bobKey, `{}`, "Idempotency-Key", "k-1"))
	if bobs.OwnerID == s.OwnerID {
		t.Error("bob's session is alice's")
	}
}

// With RequireVersion a write to an existing session without a version is 428; with one (or
// If-Match: *) it goes through. Creating and forking need none.
func TestRequireVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *httpapi.Config) { c.RequireVersion = true })
	s := e.newSession("strict")
	base := "/v1/sessions/" + s.ID
	for _, w := range []struct{ method, path, body string }{
		{"POST", base + "/messages", hello},
		{"PATCH", base + "/memory", `{"patch":{"goal":"g"}}`},
		{"PATCH", base, `{"title":"t"}`},
		{"POST", base + "/close", ""},
		{"POST", base + "/restore", ""},
		{"DELETE", base, ""},
	} {
		wantProblem(t, e.json(w.method, w.path, e.aliceKey, w.body), http.StatusPreconditionRequired, carryon.EVERSIONNEEDED)
	}
	wantStatus(t, e.json("POST", base+"/messages", e.aliceKey, hello, "If-Match", etag(s.Version)), http.StatusCreated)
	wantStatus(t, e.json("POST", base+"/messages", e.aliceKey, `{"messages":[{"role":"user","content":"b"}],"expected_version":`+strconv.FormatInt(s.Version+1, 10)+`}`), http.StatusCreated)
	wantStatus(t, e.json("PATCH", base+"/memory", e.aliceKey, `{"goal":"g"}`, "If-Match", "*", "Content-Type", "application/merge-patch+json"), http.StatusOK)
	wantStatus(t, e.json("POST", base+"/fork", e.aliceKey, ""), http.StatusCreated)
}

// Answers about one session carry its version as ETag; If-None-Match with it answers 304; 201s
// carry Location.
func TestETagsAndLocation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	a := e.json("POST", "/v1/sessions", e.aliceKey, "")
	wantStatus(t, a, http.StatusCreated)
	s := decodeBody[carryon.Session](t, a)
	if a.header.Get("Location") != "/v1/sessions/"+s.ID || a.header.Get("ETag") != etag(s.Version) {
		t.Fatalf("create: Location %q ETag %q", a.header.Get("Location"), a.header.Get("ETag"))
	}
	get := e.json("GET", "/v1/sessions/"+s.ID, e.aliceKey, "")
	if get.header.Get("ETag") != etag(s.Version) {
		t.Fatalf("get: ETag %q, want %q", get.header.Get("ETag"), etag(s.Version))
	}
	nm := e.json("GET", "/v1/sessions/"+s.ID, e.aliceKey, "", "If-None-Match", etag(s.Version))
	if nm.status != http.StatusNotModified || len(nm.body) != 0 || nm.header.Get("ETag") != etag(s.Version) {
		t.Fatalf("If-None-Match current: %d %q", nm.status, nm.body)
	}
	wantStatus(t, e.json("GET", "/v1/sessions/"+s.ID, e.aliceKey, "", "If-None-Match", etag(s.Version+7)), http.StatusOK)
	// 304 does not leak: bob gets 404 for the same tag.
	wantProblem(t, e.json("GET", "/v1/sessions/"+s.ID, e.bobKey, "", "If-None-Match", etag(s.Version)), http.StatusNotFound, carryon.ENOTFOUND)

	m := e.json("PATCH", "/v1/sessions/"+s.ID+"/memory", e.aliceKey, `{"goal":"ship it","plan":[{"title":"a","status":"todo"}]}`, "Content-Type", "application/merge-patch+json")
	wantStatus(t, m, http.StatusOK)
	st := decodeBody[carryon.WorkingMemoryState](t, m)
	if st.WorkingMemory.Goal() != "ship it" || m.header.Get("ETag") != etag(st.Version) || st.Version != s.Version+1 {
		t.Fatalf("merge patch: %+v ETag %q", st, m.header.Get("ETag"))
	}
	f := e.json("POST", "/v1/sessions/"+s.ID+"/fork", e.aliceKey, `{"title":"copy"}`)
	wantStatus(t, f, http.StatusCreated)
	fork := decodeBody[carryon.Session](t, f)
	if fork.ParentID != s.ID || f.header.Get("Location") != "/v1/sessions/"+fork.ID || f.header.Get("ETag") != etag(fork.Version) {
		t.Fatalf("fork: %+v Location %q ETag %q", fork, f.header.Get("Location"), f.header.Get("ETag"))
	}
	ap := e.json("POST", "/v1/sessions/"+s.ID+"/messages", e.aliceKey, hello)
	if loc := ap.header.Get("Location"); !strings.HasPrefix(loc, "/v1/sessions/"+s.ID+"/messages?after_seq=0") {
		t.Errorf("append Location %q", loc)
	}
	wantStatus(t, e.json("DELETE", "/v1/sessions/"+fork.ID, e.aliceKey, ""), http.StatusNoContent)
	wantProblem(t, e.json("GET", "/v1/sessions/"+fork.ID, e.aliceKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
}

// Closed sessions refuse writes with 409 session_closed until restored.
func TestClosedSessionRefusesWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("closing")
	wantStatus(t, e.json("POST", "/v1/sessions/"+s.ID+"/close", e.aliceKey, ""), http.StatusOK)
	wantProblem(t, e.json("POST", "/v1/sessions/"+s.ID+"/messages", e.aliceKey, hello), http.StatusConflict, carryon.ECLOSED)
	r := e.json("POST", "/v1/sessions/"+s.ID+"/restore", e.aliceKey, "{}")
	wantStatus(t, r, http.StatusOK)
	if decodeBody[carryon.Session](t, r).Status != carryon.SessionActive {
		t.Fatalf("restore: %s", r.body)
	}
	wantStatus(t, e.json("POST", "/v1/sessions/"+s.ID+"/messages", e.aliceKey, hello), http.StatusCreated)
}

func etag(v int64) string { return `"` + strconv.FormatInt(v, 10) + `"` }

// Concurrent writers with the same If-Match: exactly one wins, the others get 412 and write
// nothing. Concurrent repeats of one Idempotency-Key: one append, every answer the same bytes.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("race")
	msgs := "/v1/sessions/" + s.ID + "/messages"
	const n = 8
	answers := make(chan *answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers <- e.json("POST", msgs, e.aliceKey, fmt.Sprintf(`{"messages":[{"role":"user","content":"w%d"}]}`, i), "If-Match", etag(s.Version))
		}()
	}
	wg.Wait()
	close(answers)
	won := 0
	for a := range answers {
		switch a.status {
		case http.StatusCreated:
			won++
		case http.StatusPreconditionFailed:
			if a.problem.CurrentVersion == nil || *a.problem.CurrentVersion != s.Version+1 {
				t.Errorf("loser current_version = %v, want %d", a.problem.CurrentVersion, s.Version+1)
			}
		default:
			t.Errorf("unexpected answer %d %s", a.status, a.body)
		}
	}
	if won != 1 {
		t.Fatalf("%d writers won, want exactly 1", won)
	}

	replies := make(chan *answer, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies <- e.json("POST", msgs, e.aliceKey, hello, "Idempotency-Key", "same")
		}()
	}
	wg.Wait()
	close(replies)
	var first []byte
	for a := range replies {
		if a.status == http.StatusConflict && a.problem.Code == carryon.EINFLIGHT {
			continue // allowed: the first was still in flight
		}
		wantStatus(t, a, http.StatusCreated)
		if first == nil {
			first = a.body
		} else if !bytes.Equal(first, a.body) {
			t.Errorf("answers differ:\n%s\n%s", first, a.body)
		}
	}
	view := decodeBody[carryon.SessionView](t, e.json("GET", "/v1/sessions/"+s.ID, e.aliceKey, ""))
	if view.MessageCount != 2 {
		t.Errorf("%d messages, want 2 (one winner, one keyed append)", view.MessageCount)
	}
}
