package agui_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
)

// Another user's thread is a 404 exactly like a missing one (the same code, the same sentence
// but for the id), and it changes nothing in that thread.
func TestAnotherUsersThreadIsNotFound(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		s, err := e.sessions.Create(e.alice, carryon.NewSession{Title: "alice's"})
		if err != nil {
			t.Fatal(err)
		}
		theirs := errorOf(t, e.post(t, e.bobKey, input(s.ID, "run-b1", user("b1", "hi"))), 404, carryon.ENOTFOUND)
		missing := "sess_" + strings.Repeat("a", len(s.ID)-len("sess_"))
		none := errorOf(t, e.post(t, e.bobKey, input(missing, "run-b2", user("b1", "hi"))), 404, carryon.ENOTFOUND)
		if strings.ReplaceAll(theirs, s.ID, "X") != strings.ReplaceAll(none, missing, "X") {
			t.Fatalf("another user's thread: %q; a missing one: %q", theirs, none)
		}
		v, err := e.sessions.Get(e.alice, s.ID, carryon.GetOptions{})
		if err != nil || v.Version != s.Version || len(v.Messages) != 0 {
			t.Fatalf("alice's session after bob's inputs: %+v, %v", v, err)
		}
		// Alice's own input on that id runs.
		if a := e.post(t, e.aliceKey, input(s.ID, "run-a1", user("a1", "hi"))); a.last(t)["type"] != "RUN_FINISHED" {
			t.Fatalf("alice's run: %v %s", a.types(), a.body)
		}
	})
}

// Bad input is refused before anything is written, as an HTTP error in the door's JSON shape.
func TestBadInput(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		s, err := e.sessions.Create(e.alice, carryon.NewSession{Title: "t"})
		if err != nil {
			t.Fatal(err)
		}
		withField := func(k string, v any) map[string]any {
			in := input(s.ID, "run-x", user("u1", "hi"))
			in[k] = v
			return in
		}
		cases := []struct {
			name   string
			body   any
			status int
			code   string
			says   string
		}{
			{"not JSON", []byte(`{"threadId": `), 400, carryon.EINVALID, ""},
			{"empty", []byte(``), 400, carryon.EINVALID, "RunAgentInput"},
			{"a field AG-UI does not define", withField("threadID", "x"), 400, carryon.EINVALID, "threadID"},
			{"no threadId", withField("threadId", ""), 400, carryon.EINVALID, "threadId"},
			{"no runId", withField("runId", ""), 400, carryon.EINVALID, "runId"},
			{"no messages", withField("messages", nil), 400, carryon.EINVALID, "messages"},
			{"an unknown role", withField("messages", []any{map[string]any{"id": "m", "role": "robot", "content": "x"}}), 400, carryon.EINVALID, "robot"},
			{"a message without id", withField("messages", []any{map[string]any{"role": "user", "content": "x"}}), 400, carryon.EINVALID, "messages[0].id"},
			{"an image part", withField("messages", []any{map[string]any{"id": "m", "role": "user", "content": []any{map[string]any{"type": "image", "source": map[string]any{"type": "url", "value": "http://x"}}}}}), 400, carryon.EINVALID, "image"},
			{"a tool message without call", withField("messages", []any{map[string]any{"id": "m", "role": "tool", "content": "x"}}), 400, carryon.EINVALID, "toolCallId"},
			{"bad tool call arguments", withField("messages", []any{map[string]any{"id": "m", "role": "assistant", "toolCalls": []any{map[string]any{"id": "c", "type": "function", "function": map[string]any{"name": "f", "arguments": "{"}}}}}), 400, carryon.EINVALID, "arguments"},
			{"state not an object", withField("state", []any{1}), 400, carryon.EINVALID, "state"},
			{"a NUL character", []byte(`{"threadId":"` + s.ID + `","runId":"r","messages":[{"id":"m","role":"user","content":"a\u0000b"}]}`), 400, carryon.EINVALID, ""},
			{"a name twice", []byte(`{"threadId":"` + s.ID + `","runId":"r","runId":"s","messages":[]}`), 400, carryon.EINVALID, "runId"},
			{"nothing new", withField("messages", []any{map[string]any{"id": s.ID + ":1", "role": "user", "content": "x"}}), 400, carryon.EINVALID, "no new message"},
			{"a stale expected version", withField("forwardedProps", map[string]any{"carryon": map[string]any{"expected_version": 99}}), 409, carryon.EVERSION, ""},
			{"an unknown forwarded carryon prop", withField("forwardedProps", map[string]any{"carryon": map[string]any{"expected": 1}}), 400, carryon.EINVALID, "expected"},
			{"too large", []byte(`{"threadId":"` + s.ID + `","runId":"r","messages":[{"id":"m","role":"user","content":"` + strings.Repeat("x", 70<<10) + `"}]}`), 413, carryon.ETOOLARGE, ""},
		}
		for _, c := range cases {
			msg := errorOf(t, e.post(t, e.aliceKey, c.body), c.status, c.code)
			if !strings.Contains(msg, c.says) {
				t.Errorf("%s: message %q does not say %q", c.name, msg, c.says)
			}
		}
		v, err := e.sessions.Get(e.alice, s.ID, carryon.GetOptions{})
		if err != nil || v.Version != s.Version {
			t.Fatalf("the session after the refusals: version %d (was %d), %v", v.Version, s.Version, err)
		}
		// A new thread's refused input makes no session.
		msg := errorOf(t, e.post(t, e.aliceKey, input("new-thread", "run-n", map[string]any{"id": "a1", "role": "assistant", "content": "hi"})), 400, carryon.EINVALID)
		if !strings.Contains(msg, "assistant") {
			t.Errorf("a run on an assistant's message: %q", msg)
		}
		bad := input("new-thread", "run-n2", user("u1", "hi"))
		bad["tools"] = []any{map[string]any{"name": "not a name!", "description": "a name carryon refuses"}}
		errorOf(t, e.post(t, e.aliceKey, bad), 400, carryon.EINVALID)
		if page, err := e.sessions.List(e.alice, carryon.SessionFilter{ExternalID: "new-thread"}); err != nil || len(page.Items) != 0 {
			t.Fatalf("the refused inputs left sessions: %+v, %v", page, err)
		}
		errorOf(t, e.post(t, "", input(s.ID, "r", user("u", "x"))), 401, carryon.EUNAUTHORIZED)
		form, _ := http.NewRequest("POST", e.url+"/v1/ag-ui", strings.NewReader("threadId=x"))
		form.Header.Set("Authorization", "Bearer "+e.aliceKey)
		form.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if resp, err := http.DefaultClient.Do(form); err != nil || resp.StatusCode != 415 {
			t.Fatalf("a form body: %v, %v", resp, err)
		} else {
			resp.Body.Close()
		}
		req, _ := http.NewRequest("GET", e.url+"/v1/ag-ui", nil)
		req.Header.Set("Authorization", "Bearer "+e.aliceKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
			t.Fatalf("GET = %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
		}
	})
}

// A run that is still going holds its thread: another input's run is refused (409, with
// Retry-After) before its stream starts.
func TestBusyThread(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		a := e.post(t, e.aliceKey, input("thread-busy", "run-1", user("u1", "count")))
		if o, _ := a.last(t)["outcome"].(map[string]any); o == nil || o["type"] != "interrupt" {
			t.Fatalf("first run: %v", a.types())
		}
		b := e.post(t, e.aliceKey, input("thread-busy", "run-2", user("u2", "hello")))
		errorOf(t, b, 409, carryon.EBUSY)
		if b.header.Get("Retry-After") == "" {
			t.Fatalf("no Retry-After on %s", b.body)
		}
	})
}

// forwardedProps.carryon.expected_version is the version the input's first write expects: the
// state's patch when the input has one (stale: 409, the memory unchanged), else the run start.
func TestExpectedVersion(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		s, err := e.sessions.Create(e.alice, carryon.NewSession{Title: "v"})
		if err != nil {
			t.Fatal(err)
		}
		in := input(s.ID, "run-v1", user("u1", "hello"))
		in["state"] = map[string]any{"k": "v"}
		in["forwardedProps"] = map[string]any{"carryon": map[string]any{"expected_version": s.Version}}
		if a := e.post(t, e.aliceKey, in); a.last(t)["type"] != "RUN_FINISHED" || a.of("STATE_SNAPSHOT")[0]["snapshot"].(map[string]any)["k"] != "v" {
			t.Fatalf("at the current version: %v %s", a.types(), a.body)
		}
		stale := input(s.ID, "run-v2", user("u2", "again"))
		stale["state"] = map[string]any{"k": "w"}
		stale["forwardedProps"] = in["forwardedProps"]
		errorOf(t, e.post(t, e.aliceKey, stale), 409, carryon.EVERSION)
		delete(stale, "state")
		errorOf(t, e.post(t, e.aliceKey, stale), 409, carryon.EVERSION)
		wm, err := e.sessions.GetWorkingMemory(e.alice, s.ID)
		if err != nil || wm.WorkingMemory["k"] != "v" {
			t.Fatalf("the memory after the stale inputs: %v, %v", wm, err)
		}
		runs, _ := e.runs.ListRuns(e.alice, s.ID, carryon.RunFilter{})
		if len(runs.Items) != 1 {
			t.Fatalf("%d runs after the stale inputs", len(runs.Items))
		}
	})
}
