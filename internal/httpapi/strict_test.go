package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
)

// Strict JSON is strict: a name twice in an object (at any depth, also when escaped), a field
// name in another case, a lone surrogate, a number beyond a float's range and a version below 1
// are refused with a detail that says what and where, and nothing is written.
func TestStrictJSONRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("strict")
	msgs := "/v1/sessions/" + s.ID + "/messages"
	mem := "/v1/sessions/" + s.ID + "/memory"
	merge := []string{"Content-Type", "application/merge-patch+json"}
	for _, tc := range []struct {
		name, method, path, body string
		header                   []string
		detail                   string
	}{
		{"duplicate top-level field", "POST", msgs, `{"messages":[{"role":"user","content":"a"}],"messages":[{"role":"user","content":"b"}]}`, nil, `duplicate field "messages"`},
		{"duplicate nested field", "POST", msgs, `{"messages":[{"role":"user","role":"assistant","content":"x"}]}`, nil, `duplicate field "role" in messages[0]`},
		{"duplicate by escape", "POST", msgs, `{"messages":[{"role":"user","content":"a"}],"\u006dessages":[]}`, nil, `duplicate field "messages"`},
		{"duplicate in metadata", "POST", msgs, `{"messages":[{"role":"user","content":"a","metadata":{"k":1,"k":2}}]}`, nil, `duplicate field "k" in messages[0].metadata`},
		{"duplicate in tool call arguments", "POST", msgs, `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","name":"t","arguments":{"p":1,"p":2}}]}]}`, nil, `duplicate field "p" in messages[0].tool_calls[0].arguments`},
		{"duplicate in a memory patch", "PATCH", mem, `{"patch":{"goal":"a","goal":"b"}}`, nil, `duplicate field "goal" in patch`},
		{"duplicate in a bare merge patch", "PATCH", mem, `{"notes":{"a":1,"a":null}}`, merge, `duplicate field "a" in notes`},
		{"duplicate in session metadata", "PATCH", "/v1/sessions/" + s.ID, `{"metadata":{"a":1,"a":2}}`, nil, `duplicate field "a" in metadata`},
		{"field name in another case", "POST", msgs, `{"Messages":[{"role":"user","content":"a"}]}`, nil, `unknown field "Messages": field names are case-sensitive; did you mean "messages"?`},
		{"nested field name in another case", "POST", msgs, `{"messages":[{"Role":"user","content":"a"}]}`, nil, `unknown field "Role" in messages[0]`},
		{"embedded field name in another case", "POST", msgs, `{"messages":[{"role":"user","content":"a"}],"Request_ID":"x"}`, nil, `did you mean "request_id"?`},
		{"lone high surrogate", "POST", msgs, `{"messages":[{"role":"user","content":"a\ud800"}]}`, nil, `field "messages[0].content" holds \ud800, a lone UTF-16 surrogate`},
		{"lone low surrogate", "POST", msgs, `{"messages":[{"role":"user","content":"\udc00x"}]}`, nil, `lone UTF-16 surrogate`},
		{"high surrogate without its pair", "POST", msgs, `{"messages":[{"role":"user","content":"\ud800\u0041"}]}`, nil, `lone UTF-16 surrogate`},
		{"lone surrogate in a key", "PATCH", mem, `{"patch":{"\ud800":1}}`, nil, `lone UTF-16 surrogate`},
		{"number beyond a float in a bare merge patch", "PATCH", mem, `{"":1E700}`, merge, `field "" is the number 1E700, beyond the range of a 64-bit float`},
		{"number beyond a float in metadata", "POST", msgs, `{"messages":[{"role":"user","content":"a","metadata":{"k":[-1e999]}}]}`, nil, `field "messages[0].metadata.k[0]" is the number -1e999`},
		{"number beyond a float in a wrapped patch", "PATCH", mem, `{"patch":{"notes":{"n":1e309}}}`, nil, `field "patch.notes.n" is the number 1e309`},
		{"expected_version 0", "POST", msgs, `{"messages":[{"role":"user","content":"a"}],"expected_version":0}`, nil, "expected_version must be a session version, 1 or more, not 0"},
		{"expected_version -1", "PATCH", mem, `{"patch":{"goal":"a"},"expected_version":-1}`, nil, "not -1"},
		{"If-Match 0", "POST", msgs, `{"messages":[{"role":"user","content":"a"}]}`, []string{"If-Match", `"0"`}, "1 or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := e.json(tc.method, tc.path, e.aliceKey, tc.body, tc.header...)
			wantProblem(t, a, http.StatusBadRequest, carryon.EINVALID)
			if !strings.Contains(a.problem.Detail, tc.detail) {
				t.Fatalf("detail %q does not say %q", a.problem.Detail, tc.detail)
			}
		})
	}
	a := e.json("GET", "/v1/sessions/"+s.ID, e.aliceKey, "")
	if v := decodeBody[carryon.SessionView](t, a); v.Version != s.Version || v.MessageCount != 0 || len(v.WorkingMemory) != 0 || v.Metadata != nil {
		t.Fatalf("refused requests wrote something: %s", a.body)
	}
	// A surrogate pair is a character, not a lone surrogate.
	a = e.json("POST", msgs, e.aliceKey, `{"messages":[{"role":"user","content":"\ud83d\ude00"}]}`)
	wantStatus(t, a, http.StatusCreated)
	if got := decodeBody[carryon.AppendResult](t, a).Messages[0].Content; got != "😀" {
		t.Fatalf("content %q, want 😀", got)
	}
}

// A body that starts with a UTF-8 byte-order mark is read as if it had none (RFC 8259 8.1).
func TestByteOrderMarkIgnored(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("bom")
	a := e.json("POST", "/v1/sessions/"+s.ID+"/messages", e.aliceKey, "\xef\xbb\xbf"+`{"messages":[{"role":"user","content":"hi"}]}`)
	wantStatus(t, a, http.StatusCreated)
	a = e.json("PATCH", "/v1/sessions/"+s.ID+"/memory", e.aliceKey, "\xef\xbb\xbf"+`{"goal":"g"}`, "Content-Type", "application/merge-patch+json")
	wantStatus(t, a, http.StatusOK)
	if wm := decodeBody[carryon.WorkingMemoryState](t, a).WorkingMemory; wm.Goal() != "g" {
		t.Fatalf("memory after a bare patch with a BOM: %v", wm)
	}
	wantProblem(t, e.json("POST", "/v1/sessions/"+s.ID+"/messages", e.aliceKey, "\xef\xbb\xbf"), http.StatusBadRequest, carryon.EINVALID)
}

// Integers above 2^53 come back exactly, from working memory (set on create, patched, replayed
// under a request id, in the history), metadata and tool calls.
func TestBigIntegersRoundTrip(t *testing.T) {
	t.Parallel()
	const big = "9007199254740993"
	e := newEnv(t, nil)
	a := e.json("POST", "/v1/sessions", e.aliceKey, `{"title":"big","metadata":{"n":`+big+`},"working_memory":{"start":`+big+`}}`)
	wantStatus(t, a, http.StatusCreated)
	id := decodeBody[carryon.Session](t, a).ID
	bodies := map[string]string{"create": string(a.body)}
	patch := `{"patch":{"count":` + big + `,"deep":{"list":[` + big + `]}}}`
	a = e.json("PATCH", "/v1/sessions/"+id+"/memory", e.aliceKey, patch, "Idempotency-Key", "p1")
	wantStatus(t, a, http.StatusOK)
	bodies["patch"] = string(a.body)
	a = e.json("PATCH", "/v1/sessions/"+id+"/memory", e.aliceKey, patch, "Idempotency-Key", "p1")
	if a.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("no replay: %s", a.body)
	}
	bodies["patch replay"] = string(a.body)
	a = e.json("POST", "/v1/sessions/"+id+"/messages", e.aliceKey,
		`{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","name":"t","arguments":{"n":`+big+`}}],"metadata":{"m":`+big+`}}]}`)
	wantStatus(t, a, http.StatusCreated)
	for _, p := range []string{"", "/memory", "/memory/history", "/messages"} {
		bodies["GET"+p] = string(e.json("GET", "/v1/sessions/"+id+p, e.aliceKey, "").body)
	}
	for name, body := range bodies {
		if !strings.Contains(body, big) || strings.Contains(body, "9007199254740992") {
			t.Errorf("%s: %s does not keep %s", name, body, big)
		}
	}
	if n := strings.Count(bodies["GET/memory"], big); n != 3 {
		t.Errorf("memory %s holds %s %d times, want 3", bodies["GET/memory"], big, n)
	}
	// The Go client keeps them too.
	st, err := e.client(e.aliceKey).GetWorkingMemory(ctx(t), id)
	if err != nil || st.WorkingMemory["count"] != json.Number(big) {
		t.Errorf("client read: %v %#v", err, st)
	}
}

// Text with a NUL character is refused the same way on every driver: 400 naming the field and
// index, and nothing is stored (PostgreSQL cannot store it; SQLite could).
func TestNULRefusedOnEveryDriver(t *testing.T) {
	t.Parallel()
	drivers := envDrivers(t)
	for name, start := range drivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := start(t)
			s := e.newSession("nul")
			path := "/v1/sessions/" + s.ID + "/messages"
			a := e.json("POST", path, e.aliceKey, `{"messages":[{"role":"user","content":"ok"},{"role":"user","content":"ok"},{"role":"user","content":"a\u0000b"}]}`)
			wantProblem(t, a, http.StatusBadRequest, carryon.EINVALID)
			if a.problem.Detail != "messages[2].content contains a NUL character" {
				t.Fatalf("detail %q", a.problem.Detail)
			}
			for _, c := range []struct{ method, path, body, detail string }{
				{"PATCH", "/v1/sessions/" + s.ID, `{"title":"x\u0000"}`, "title contains a NUL"},
				{"PATCH", "/v1/sessions/" + s.ID + "/memory", `{"patch":{"goal":"\u0000"}}`, "patch.goal contains a NUL"},
				{"POST", "/v1/sessions/" + s.ID + "/runs", `{"message":"go\u0000"}`, "NUL"},
				{"PUT", "/v1/memories/prefs/k", `{"value":{"v":"\u0000"}}`, "value.v contains a NUL"},
				{"POST", "/v1/memories/search", `{"query":"\u0000"}`, "query contains a NUL"},
			} {
				a := e.json(c.method, c.path, e.aliceKey, c.body)
				wantProblem(t, a, http.StatusBadRequest, carryon.EINVALID)
				if !strings.Contains(a.problem.Detail, c.detail) {
					t.Errorf("%s %s: detail %q does not say %q", c.method, c.path, a.problem.Detail, c.detail)
				}
			}
			page := decodeBody[carryon.MessagePage](t, e.json("GET", path, e.aliceKey, ""))
			v := decodeBody[carryon.SessionView](t, e.json("GET", "/v1/sessions/"+s.ID, e.aliceKey, ""))
			if len(page.Items) != 0 || v.Version != s.Version || v.Title != "nul" {
				t.Fatalf("a refused request stored something: %+v, %+v", page.Items, v)
			}
		})
	}
}
