package main

import (
	"strings"
	"testing"
)

// TestRunDoors checks that every run records the front door it was started through (Run.Door), on
// the run's answer and in the session's run list, whatever door reads it: the native API, the
// native API with the stdio MCP bridge's header (and with a header value that is not honoured),
// MCP over HTTP and over stdio, the OpenAI-compatible Responses API, AG-UI, the AI SDK chat, A2A,
// and a schedule run now. Each door's run is made by a user of its own, whose one session holds it.
func TestRunDoors(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data)
	newSession := func(key string) string {
		return must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "doors"}, 201).json(t)["id"].(string)
	}
	// door is the door of the one run of the user's one session, once it has ended.
	door := func(key string) string {
		t.Helper()
		items := must(t, srv.url, key, "GET", "/v1/sessions", nil, 200).json(t)["items"].([]any)
		if len(items) != 1 {
			t.Fatalf("the user has %d sessions, want 1", len(items))
		}
		sid := items[0].(map[string]any)["id"].(string)
		runs := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/runs", nil, 200).json(t)["items"].([]any)
		if len(runs) != 1 {
			t.Fatalf("session %s has %d runs, want 1", sid, len(runs))
		}
		listed := runs[0].(map[string]any)
		run := waitRun(t, srv, key, listed["id"].(string))
		if listed["door"] != run["door"] {
			t.Fatalf("the run list says door %v, the run %v", listed["door"], run["door"])
		}
		d, _ := run["door"].(string)
		return d
	}
	cases := []struct {
		door  string
		start func(key string)
	}{
		{"api", func(key string) {
			must(t, srv.url, key, "POST", "/v1/sessions/"+newSession(key)+"/runs", map[string]any{"message": "hello"}, 202)
		}},
		{"mcp", func(key string) { // the header carryon mcp sends over stdio
			must(t, srv.url, key, "POST", "/v1/sessions/"+newSession(key)+"/runs", map[string]any{"message": "hello"}, 202, "Carryon-Door: mcp")
		}},
		{"api", func(key string) { // only "mcp" is taken from the header: a client cannot claim a schedule
			must(t, srv.url, key, "POST", "/v1/sessions/"+newSession(key)+"/runs", map[string]any{"message": "hello"}, 202, "Carryon-Door: schedule")
		}},
		{"mcp", func(key string) {
			h := &repeatHub{t: t, srv: srv}
			mcpOK(t, h.session(key), "start_run", map[string]any{"session_id": newSession(key), "message": "hello"})
		}},
		{"mcp", func(key string) {
			mcpOK(t, mcpProcess(t, "--server", srv.url, "--key", key), "start_run", map[string]any{"session_id": newSession(key), "message": "hello"})
		}},
		{"openai", func(key string) {
			h := &repeatHub{t: t, srv: srv}
			if r := h.compat(request{method: "POST", path: "/v1/responses", key: key, body: map[string]any{"model": "default", "input": "hello"}}); r.status != 200 {
				t.Fatalf("POST /v1/responses: %d %s", r.status, r.body)
			}
		}},
		{"ag-ui", func(key string) {
			in := map[string]any{"threadId": "thread-doors", "runId": "run-doors", "tools": []any{}, "context": []any{}, "state": map[string]any{},
				"forwardedProps": map[string]any{}, "messages": []any{map[string]any{"id": "m1", "role": "user", "content": "hello"}}}
			aguiEvents(t, postAGUI(t, srv.url, key, in))
		}},
		{"ai-sdk", func(key string) {
			body := map[string]any{"id": "chat-doors", "trigger": "submit-message", "messages": []any{map[string]any{"id": "m1", "role": "user",
				"parts": []any{map[string]any{"type": "text", "text": "hello"}}}}}
			h := &repeatHub{t: t, srv: srv} // its client does not hold answers to the native API's document
			if r := h.compat(request{method: "POST", path: "/v1/ai-sdk/chat", key: key, body: body}); r.status != 200 || !strings.Contains(string(r.body), `"type":"finish"`) {
				t.Fatalf("the AI SDK chat's stream did not finish: %s", r.body)
			}
		}},
		{"a2a", func(key string) {
			body := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": map[string]any{"message": map[string]any{
				"messageId": "m-doors", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hello"}}}}}
			h := &repeatHub{t: t, srv: srv}
			if r := h.compat(request{method: "POST", path: "/a2a", key: key, body: body}); r.status != 200 || strings.Contains(string(r.body), `"error"`) {
				t.Fatalf("A2A SendMessage: %s", r.body)
			}
		}},
		{"schedule", func(key string) {
			sc := must(t, srv.url, key, "POST", "/v1/sessions/"+newSession(key)+"/schedules", map[string]any{"cron": "0 8 1 1 *", "message": "yearly"}, 201).json(t)
			must(t, srv.url, key, "POST", "/v1/schedules/"+sc["id"].(string)+"/run", nil, 201)
		}},
	}
	for i, c := range cases {
		key := addUser(t, data, "door"+itoa(i))
		c.start(key)
		if got := door(key); got != c.door {
			t.Errorf("case %d: the run's door is %q, want %q", i, got, c.door)
		}
	}
}
