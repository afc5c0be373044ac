package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/httpapi"
)

// longTermPart returns the content of the long_term_memory part of a session's context, read
// over HTTP with key.
func (e *env) longTermPart(key, sessionID string) string {
	e.t.Helper()
	a := e.json("GET", "/v1/sessions/"+sessionID+"/context", key, "")
	wantStatus(e.t, a, http.StatusOK)
	cx := decodeBody[contextbuild.Context](e.t, a)
	for _, p := range cx.Parts {
		if p.Name == "long_term_memory" {
			return p.Content
		}
	}
	e.t.Fatalf("context of %s has no long_term_memory part: %s", sessionID, a.body)
	return ""
}

// sessionAs makes a session of the key's user, with a first user message when msg is not empty.
func (e *env) sessionAs(key, msg string) string {
	e.t.Helper()
	a := e.json("POST", "/v1/sessions", key, `{"title":"t"}`)
	wantStatus(e.t, a, http.StatusCreated)
	id := decodeBody[carryon.Session](e.t, a).ID
	if msg != "" {
		b, _ := json.Marshal(map[string]any{"messages": []map[string]string{{"role": "user", "content": msg}}})
		wantStatus(e.t, e.json("POST", "/v1/sessions/"+id+"/messages", key, string(b)), http.StatusCreated)
	}
	return id
}

// Two users with colliding namespaces (u1, u1.x, u10) and identical keys: no memory route and no
// context ever gives one user the other's items. Every /v1/memories route of the table is walked.
func TestLongTermNeverCrossesUsers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	users := map[string]string{"alice": e.aliceKey, "bob": e.bobKey}
	covered := map[string]bool{}
	mark := func(method, pattern string) { covered[method+" "+pattern] = true }
	for name, key := range users {
		for _, ns := range []string{"u1", "u1.x", "u10"} {
			body := fmt.Sprintf(`{"value":{"owner":%q},"text":"shared words about editors from %s"}`, name, name)
			a := e.json("PUT", "/v1/memories/"+ns+"/k", key, body)
			wantStatus(t, a, http.StatusOK)
			mark("PUT", "/v1/memories/{namespace}/{key}")
		}
	}
	wantStatus(t, e.json("PUT", "/v1/memories/prefs/editor", e.aliceKey, `{"value":"vim","text":"alice prefers the vim editor"}`), http.StatusOK)

	// owned checks that every item of an answer belongs to name.
	owned := func(name, what string, raw []byte) int {
		t.Helper()
		var page struct {
			Items []carryon.LongTermItem `json:"items"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, it := range page.Items {
			if strings.Contains(string(it.Value), "vim") != (name == "alice" && it.Key == "editor") ||
				!strings.Contains(string(it.Value), name) && it.Key != "editor" || strings.Contains(it.Text, other(name)) {
				t.Fatalf("%s as %s returned %s/%s = %s %q", what, name, it.Namespace, it.Key, it.Value, it.Text)
			}
		}
		return len(page.Items)
	}
	for name, key := range users {
		for _, ns := range []string{"u1", "u1.x", "u10"} {
			a := e.json("GET", "/v1/memories/"+ns+"/k", key, "")
			wantStatus(t, a, http.StatusOK)
			if it := decodeBody[carryon.LongTermItem](t, a); !strings.Contains(string(it.Value), name) {
				t.Fatalf("%s GET %s/k = %s", name, ns, a.body)
			}
			mark("GET", "/v1/memories/{namespace}/{key}")
		}
		want := map[string]int{"": 3, "u1": 2, "u1.x": 1, "u10": 1, "prefs": 0}
		if name == "alice" {
			want[""], want["prefs"] = 4, 1
		}
		for ns, n := range want {
			a := e.json("GET", "/v1/memories?namespace="+url.QueryEscape(ns), key, "")
			wantStatus(t, a, http.StatusOK)
			if got := owned(name, "list "+ns, a.body); got != n {
				t.Errorf("%s lists %d items in %q, want %d: %s", name, got, ns, n, a.body)
			}
			mark("GET", "/v1/memories")
		}
		for _, q := range []string{"", " ", "*", "%", "_", `"`, "'", "OR", "NEAR(a b)", "u1*", "%u1%", "k", "shared editors",
			"alice prefers the vim editor", "bob", "alice", `" OR 1=1 --`} {
			for _, ns := range []string{"", "u1", "u10", "prefs"} {
				b, _ := json.Marshal(carryon.LongTermSearch{Query: q, Namespace: ns})
				a := e.json("POST", "/v1/memories/search", key, string(b))
				wantStatus(t, a, http.StatusOK)
				owned(name, fmt.Sprintf("search %q in %q", q, ns), a.body)
				mark("POST", "/v1/memories/search")
			}
		}
	}
	// The same fact added by each user consolidates into that user's own item only, and another
	// user's item has no versions to read.
	var added = map[string]carryon.LongTermAdded{}
	for range 2 {
		for name, key := range users {
			a := e.json("POST", "/v1/memories/facts", key, `{"text":"shared fact of the team"}`)
			wantStatus(t, a, http.StatusOK)
			got := decodeBody[carryon.LongTermAdded](t, a)
			if first, ok := added[name]; ok && (got.ConsolidatedInto != first.Key || got.Key != first.Key) {
				t.Fatalf("%s's second add %s, want consolidated into %s", name, a.body, first.Key)
			} else if !ok {
				added[name] = got
			}
			mark("POST", "/v1/memories/{namespace}")
			wantStatus(t, e.json("GET", "/v1/memories/facts/"+got.Key+"/versions", key, ""), http.StatusOK)
			mark("GET", "/v1/memories/{namespace}/{key}/versions")
		}
	}
	if added["alice"].Key == added["bob"].Key {
		t.Fatalf("alice and bob share the key %s", added["alice"].Key)
	}
	wantProblem(t, e.json("GET", "/v1/memories/facts/"+added["alice"].Key+"/versions", e.bobKey, ""), http.StatusNotFound, carryon.ENOTFOUND)

	// Bob cannot read or delete Alice's item, which stays; through the client the same.
	wantProblem(t, e.json("GET", "/v1/memories/prefs/editor", e.bobKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
	wantProblem(t, e.json("DELETE", "/v1/memories/prefs/editor", e.bobKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
	mark("DELETE", "/v1/memories/{namespace}/{key}")
	bob := e.client(e.bobKey).LongTerm()
	if _, err := bob.Get(ctx(t), "prefs", "editor"); carryon.ErrorCode(err) != carryon.ENOTFOUND {
		t.Fatalf("client Get as bob: %v", err)
	}
	if res, err := bob.Search(ctx(t), carryon.LongTermSearch{Query: "vim editor"}); err != nil || len(res.Items) != 0 && strings.Contains(string(res.Items[0].Value), "vim") {
		t.Fatalf("client Search as bob: %+v, %v", res, err)
	}
	wantStatus(t, e.json("GET", "/v1/memories/prefs/editor", e.aliceKey, ""), http.StatusOK)
	// Bob deleting his u1/k leaves Alice's.
	if err := bob.Delete(ctx(t), "u1", "k", carryon.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.json("GET", "/v1/memories/u1/k", e.aliceKey, ""), http.StatusOK)

	// Contexts: each user's session shows only that user's memory, for a relevant message and
	// for none at all (the newest items).
	for _, msg := range []string{"which editors do I prefer, vim?", ""} {
		for name, key := range users {
			lt := e.longTermPart(key, e.sessionAs(key, msg))
			if strings.Contains(lt, other(name)) || name == "bob" && strings.Contains(lt, "vim") {
				t.Fatalf("%s's context (message %q) holds the other user's memory:\n%s", name, msg, lt)
			}
			if !strings.Contains(lt, name) {
				t.Fatalf("%s's context (message %q) lacks %s's own memory:\n%s", name, msg, name, lt)
			}
		}
	}
	for _, rt := range httpapi.Routes() {
		if strings.HasPrefix(rt.Pattern, "/v1/memories") && !covered[rt.Method+" "+rt.Pattern] {
			t.Errorf("route %s %s is not walked by this test", rt.Method, rt.Pattern)
		}
	}
}

func other(name string) string {
	if name == "alice" {
		return "bob"
	}
	return "alice"
}

// Deleting an item removes it from get, list, search and the next context.
func TestLongTermDeleteRemovesEverywhere(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	alice := e.client(e.aliceKey).LongTerm()
	if _, err := alice.Put(ctx(t), "prefs", "editor", carryon.LongTermPut{Value: json.RawMessage(`"helix"`), Text: "uses the helix editor"}); err != nil {
		t.Fatal(err)
	}
	sess := e.sessionAs(e.aliceKey, "which editor should I open?")
	if lt := e.longTermPart(e.aliceKey, sess); !strings.Contains(lt, "- prefs/editor: uses the helix editor (score 1.00)") {
		t.Fatalf("context before delete:\n%s", lt)
	}
	wantStatus(t, e.json("DELETE", "/v1/memories/prefs/editor", e.aliceKey, ""), http.StatusNoContent)
	wantProblem(t, e.json("GET", "/v1/memories/prefs/editor", e.aliceKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
	wantProblem(t, e.json("DELETE", "/v1/memories/prefs/editor", e.aliceKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
	if page, err := alice.List(ctx(t), carryon.LongTermFilter{}); err != nil || len(page.Items) != 0 {
		t.Fatalf("list after delete: %+v, %v", page, err)
	}
	for _, q := range []string{"helix editor", ""} {
		if res, err := alice.Search(ctx(t), carryon.LongTermSearch{Query: q}); err != nil || len(res.Items) != 0 {
			t.Fatalf("search %q after delete: %+v, %v", q, res, err)
		}
	}
	if lt := e.longTermPart(e.aliceKey, sess); lt != "" {
		t.Fatalf("context after delete:\n%s", lt)
	}
}

// Bad input is a 400 problem; a server without a memory service answers 501.
func TestLongTermRouteErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for _, c := range []struct{ method, path, body string }{
		{"PUT", "/v1/memories/Prefs/k", `{"value":1}`},
		{"PUT", "/v1/memories/prefs/k", `{"text":"no value"}`},
		{"PUT", "/v1/memories/prefs/k", `{"value":1,"owner_id":"usr_other"}`},
		{"PUT", "/v1/memories/prefs/k", `{"value":1,"ttl_seconds":-5}`},
		{"GET", "/v1/memories?namespace=u1%25", ""},
		{"GET", "/v1/memories?cursor=nope", ""},
		{"POST", "/v1/memories/search", `{"query":"x","limit":1000}`},
		{"POST", "/v1/memories/search", `{"query":"x","namespace":"a..b"}`},
	} {
		wantProblem(t, e.json(c.method, c.path, e.aliceKey, c.body), http.StatusBadRequest, carryon.EINVALID)
	}
	bare := newEnv(t, func(c *httpapi.Config) { c.LongTerm = nil })
	wantProblem(t, bare.json("GET", "/v1/memories", bare.aliceKey, ""), http.StatusNotImplemented, carryon.ENOTIMPLEMENTED)
}

// A preference stated in one session of a user (the scripted model calls remember) is in the
// context of that user's next session, and its answers mention it; another user's is not.
func TestPreferenceCarriesToNextSessionOfSameUserOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	chat := func(key, sessionID, msg string) carryon.ChatResult {
		t.Helper()
		b, _ := json.Marshal(carryon.ChatInput{SessionID: sessionID, Message: msg})
		a := e.json("POST", "/v1/chat", key, string(b))
		wantStatus(t, a, http.StatusOK)
		return decodeBody[carryon.ChatResult](t, a)
	}
	first := chat(e.aliceKey, "", "I prefer dark mode in the editor.")
	acts := decodeBody[httpapi.ActionList](t, e.json("GET", "/v1/runs/"+first.RunID+"/actions", e.aliceKey, ""))
	if len(acts.Items) == 0 || acts.Items[0].Tool != "remember" || acts.Items[0].Status != carryon.ActionSucceeded {
		t.Fatalf("the first run's actions: %+v", acts.Items)
	}
	if !strings.Contains(first.Reply, "Noted preference: I prefer dark mode in the editor") {
		t.Fatalf("first reply: %q", first.Reply)
	}
	it, err := e.client(e.aliceKey).LongTerm().Get(ctx(t), "prefs", "dark-mode-editor")
	if err != nil || it.Text != "I prefer dark mode in the editor" {
		t.Fatalf("remembered item: %+v, %v", it, err)
	}

	second := e.sessionAs(e.aliceKey, "")
	if lt := e.longTermPart(e.aliceKey, second); !strings.Contains(lt, "prefs/dark-mode-editor: I prefer dark mode in the editor") {
		t.Fatalf("alice's next session's context:\n%s", lt)
	}
	if r := chat(e.aliceKey, second, "Which editor theme should I set up?"); !strings.Contains(r.Reply, "Noted preference: I prefer dark mode in the editor") {
		t.Fatalf("alice's next answer: %q", r.Reply)
	}
	if lt := e.longTermPart(e.aliceKey, second); !strings.Contains(lt, "(score 1.00)") {
		t.Fatalf("alice's context after a relevant message:\n%s", lt)
	}

	bobs := e.sessionAs(e.bobKey, "")
	if lt := e.longTermPart(e.bobKey, bobs); lt != "" {
		t.Fatalf("bob's new session's context holds memory:\n%s", lt)
	}
	if r := chat(e.bobKey, bobs, "Which editor theme should I set up?"); strings.Contains(r.Reply, "dark mode") {
		t.Fatalf("bob's answer mentions alice's preference: %q", r.Reply)
	}
	if lt := e.longTermPart(e.bobKey, bobs); strings.Contains(lt, "dark") {
		t.Fatalf("bob's context after a run:\n%s", lt)
	}
}

// TestLongTermItemConditionalWrites: GET and PUT answer the item's version as ETag; If-Match on
// PUT and DELETE writes only at that version (412 when stale, with current_version), so does
// expected_version in the body (409); If-Match "0" creates only.
func TestLongTermItemConditionalWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	path := "/v1/memories/adk.user/state"
	a := e.json("PUT", path, e.aliceKey, `{"value":{"n":1}}`, "If-Match", `"0"`)
	if a.status != 200 || a.header.Get("ETag") != `"1"` {
		t.Fatalf("create-only put: %d %s %s", a.status, a.header.Get("ETag"), a.body)
	}
	wantProblem(t, e.json("PUT", path, e.aliceKey, `{"value":{"n":2}}`, "If-Match", `"0"`), 412, carryon.EVERSION)
	if g := e.json("GET", path, e.aliceKey, ""); g.status != 200 || g.header.Get("ETag") != `"1"` {
		t.Fatalf("get: %d %s", g.status, g.header.Get("ETag"))
	}
	if a := e.json("PUT", path, e.aliceKey, `{"value":{"n":2}}`, "If-Match", `"1"`); a.status != 200 || a.header.Get("ETag") != `"2"` {
		t.Fatalf("put at version 1: %d %s %s", a.status, a.header.Get("ETag"), a.body)
	}
	stale := e.json("PUT", path, e.aliceKey, `{"value":{"n":3},"expected_version":1}`)
	wantProblem(t, stale, 409, carryon.EVERSION)
	if !strings.Contains(string(stale.body), `"current_version":2`) {
		t.Fatalf("the conflict does not say the current version: %s", stale.body)
	}
	wantProblem(t, e.json("DELETE", path, e.aliceKey, "", "If-Match", `"1"`), 412, carryon.EVERSION)
	wantProblem(t, e.json("DELETE", path, e.bobKey, "", "If-Match", `"2"`), 404, carryon.ENOTFOUND)
	if a := e.json("DELETE", path, e.aliceKey, "", "If-Match", `"2"`); a.status != 204 {
		t.Fatalf("delete at version 2: %d %s", a.status, a.body)
	}
	wantProblem(t, e.json("GET", path, e.aliceKey, ""), 404, carryon.ENOTFOUND)
}
