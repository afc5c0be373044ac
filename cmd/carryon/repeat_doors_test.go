package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// compatRoutes are the routes of the OpenAI-compatible door that write; each has a case (a
// route may have several, named "route (how)"). DELETE /v1/responses/{response_id} is not among
// them: it writes nothing, every call is refused with 400 (a response is part of its
// conversation's history, which carryon keeps).
var compatRoutes = []string{
	"POST /v1/conversations",
	"POST /v1/conversations/{conversation_id}",
	"DELETE /v1/conversations/{conversation_id}",
	"POST /v1/conversations/{conversation_id}/items",
	"DELETE /v1/conversations/{conversation_id}/items/{item_id}",
	"POST /v1/responses",
	"POST /v1/responses/{response_id}/cancel",
}

// weatherTool is a function tool the scripted model calls when the input says /tool get_weather.
var weatherTool = map[string]any{"type": "function", "name": "get_weather",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}

// compatCases are the cases of every write route of the OpenAI-compatible door.
func (h *repeatHub) compatCases() []repeatCase {
	t, alice := h.t, h.admin
	compat := func(key, method, path string, body any) request {
		return request{door: "compat", method: method, path: path, body: body, key: key}
	}
	conversation := func(x *target) string {
		return h.compatGet(alice, "/v1/conversations/"+x.id) + "\n" + h.compatGet(alice, "/v1/conversations/"+x.id+"/items?order=asc&limit=100")
	}
	fresh := func(x *target) {
		x.id = jsonField(t, string(h.compat(compat(alice, "POST", "/v1/conversations", map[string]any{
			"items": []any{map[string]any{"type": "message", "role": "user", "content": "hello"}}})).body), "id")
	}
	own := func(x *target) string { return h.get(x.user, "/v1/sessions?limit=1000") }
	// at sends r with If-Match: the version the conversation is at now.
	at := func(r request, x *target) request {
		r.headers = append(r.headers, fmt.Sprintf(`If-Match: "%d"`, h.version(x.id)))
		return r
	}
	// waiting makes a response that waits for get_weather's output, on a new conversation.
	waiting := func(x *target) {
		b := h.compat(compat(alice, "POST", "/v1/responses", map[string]any{"model": "default",
			"input": "the weather?\n/tool get_weather {\"city\":\"Paris\"}", "tools": []any{weatherTool}})).body
		var r struct {
			ID           string `json:"id"`
			Conversation struct {
				ID string `json:"id"`
			} `json:"conversation"`
			Output []struct {
				CallID string `json:"call_id"`
			} `json:"output"`
		}
		if err := json.Unmarshal(b, &r); err != nil || len(r.Output) == 0 || r.Output[len(r.Output)-1].CallID == "" {
			t.Fatalf("a response calling get_weather: %s", b)
		}
		x.run, x.id, x.item = r.ID, r.Conversation.ID, r.Output[len(r.Output)-1].CallID
	}
	cases := []repeatCase{
		{name: "POST /v1/conversations", prepare: func(x *target) request {
			x.user = h.newUser("conversant")
			return compat(x.user, "POST", "/v1/conversations", map[string]any{"metadata": map[string]any{"topic": "repeats"},
				"items": []any{map[string]any{"type": "message", "role": "user", "content": "hello"}}})
		}, state: own},
		{name: "POST /v1/conversations/{conversation_id}", prepare: func(x *target) request {
			fresh(x)
			return at(compat(alice, "POST", "/v1/conversations/"+x.id, map[string]any{"metadata": map[string]any{"topic": "again"}}), x)
		}, state: conversation},
		{name: "DELETE /v1/conversations/{conversation_id}", prepare: func(x *target) request {
			fresh(x)
			return at(compat(alice, "DELETE", "/v1/conversations/"+x.id, nil), x)
		}, state: func(x *target) string { return h.status(alice, "/v1/sessions/"+x.id) }},
		{name: "POST /v1/conversations/{conversation_id}/items", prepare: func(x *target) request {
			fresh(x)
			return at(compat(alice, "POST", "/v1/conversations/"+x.id+"/items", map[string]any{"items": []any{
				map[string]any{"type": "message", "role": "user", "content": "one"},
				map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": "two"}}}}}), x)
		}, state: conversation},
		{name: "DELETE /v1/conversations/{conversation_id}/items/{item_id}", prepare: func(x *target) request {
			fresh(x)
			b := h.compat(compat(alice, "POST", "/v1/conversations/"+x.id+"/items", map[string]any{"items": []any{
				map[string]any{"type": "message", "role": "user", "content": "doomed"}}})).body
			return at(compat(alice, "DELETE", "/v1/conversations/"+x.id+"/items/"+jsonField(t, string(b), "first_id"), nil), x)
		}, state: conversation},
		{name: "POST /v1/responses (a new conversation)", prepare: func(x *target) request {
			x.user = h.newUser("responder")
			return compat(x.user, "POST", "/v1/responses", map[string]any{"model": "default", "input": "hello", "metadata": map[string]any{"k": "v"}})
		}, state: own},
		{name: "POST /v1/responses (streamed)", prepare: func(x *target) request {
			fresh(x)
			return compat(alice, "POST", "/v1/responses", map[string]any{"model": "default", "input": "stream it", "conversation": x.id, "stream": true})
		}, state: conversation},
		{name: "POST /v1/responses (on a conversation)", prepare: func(x *target) request {
			fresh(x)
			return compat(alice, "POST", "/v1/responses", map[string]any{"model": "default", "input": "again", "conversation": x.id})
		}, state: conversation},
		{name: "POST /v1/responses (continuing the latest response)", prepare: func(x *target) request {
			fresh(x)
			b := h.compat(compat(alice, "POST", "/v1/responses", map[string]any{"model": "default", "input": "first", "conversation": x.id})).body
			return compat(alice, "POST", "/v1/responses", map[string]any{"model": "default", "input": "second", "previous_response_id": jsonField(t, string(b), "id")})
		}, state: conversation},
		{name: "POST /v1/responses (function call outputs)", prepare: func(x *target) request {
			waiting(x)
			return compat(alice, "POST", "/v1/responses", map[string]any{"model": "default", "previous_response_id": x.run,
				"input": []any{map[string]any{"type": "function_call_output", "call_id": x.item, "output": "sunny"}}})
		}, state: conversation},
		{name: "POST /v1/responses/{response_id}/cancel", prepare: func(x *target) request {
			waiting(x)
			return compat(alice, "POST", "/v1/responses/"+x.run+"/cancel", nil)
		}, state: func(x *target) string { return h.compatGet(alice, "/v1/responses/"+x.run) + "\n" + conversation(x) }},
	}
	has := map[string]bool{}
	for _, c := range cases {
		has[strings.SplitN(c.name, " (", 2)[0]] = true
	}
	for _, r := range compatRoutes {
		if !has[r] {
			t.Errorf("compatible route %s has no case in TestRepeatEveryWrite", r)
		}
	}
	return cases
}

// mcpCases are the cases of every MCP tool that writes (every tool not marked read-only).
func (h *repeatHub) mcpCases() []repeatCase {
	t, alice := h.t, h.admin
	tool := func(key, name string, args map[string]any) request {
		return request{door: "mcp", path: name, body: args, key: key}
	}
	fresh := func(x *target) {
		x.id = must(t, h.srv.url, alice, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	}
	session := func(x *target) string {
		return h.get(alice, "/v1/sessions/"+x.id+"?messages=1000") + "\n" + h.get(alice, "/v1/sessions/"+x.id+"/runs")
	}
	// at adds expected_version: the version the session is at now.
	at := func(r request, x *target) request {
		r.body.(map[string]any)["expected_version"] = h.version(x.id)
		return r
	}
	// schedule makes a yearly schedule with the overlap policy on a new session.
	schedule := func(x *target, overlap string) string {
		fresh(x)
		return must(t, h.srv.url, alice, "POST", "/v1/sessions/"+x.id+"/schedules", map[string]any{"cron": "0 8 1 1 *", "message": "m", "overlap": overlap}, 201).json(t)["id"].(string)
	}
	cases := []repeatCase{
		{name: "mcp create_session", prepare: func(x *target) request {
			x.user = h.newUser("mcp-creator")
			return tool(x.user, "create_session", map[string]any{"title": "made once", "working_memory": map[string]any{"goal": "g"}})
		}, state: func(x *target) string { return h.get(x.user, "/v1/sessions?limit=1000") }},
		{name: "mcp append_messages", prepare: func(x *target) request {
			fresh(x)
			return at(tool(alice, "append_messages", map[string]any{"session_id": x.id, "messages": []any{
				map[string]any{"role": "user", "content": "first"}, map[string]any{"role": "assistant", "content": "second"}}}), x)
		}, state: session},
		{name: "mcp update_working_memory", prepare: func(x *target) request {
			fresh(x)
			return at(tool(alice, "update_working_memory", map[string]any{"session_id": x.id, "patch": map[string]any{"goal": "once"}}), x)
		}, state: session},
		{name: "mcp delete_message", prepare: func(x *target) request {
			fresh(x)
			must(t, h.srv.url, alice, "POST", "/v1/sessions/"+x.id+"/messages", appendBody("doomed"), 201)
			must(t, h.srv.url, alice, "POST", "/v1/sessions/"+x.id+"/messages", appendBody("kept"), 201)
			return at(tool(alice, "delete_message", map[string]any{"session_id": x.id, "seq": 1}), x)
		}, state: session},
		{name: "mcp start_run", prepare: func(x *target) request {
			fresh(x)
			return at(tool(alice, "start_run", map[string]any{"session_id": x.id, "message": "hello"}), x)
		}, settle: func(x *target, a answer) {
			if !strings.Contains(a.body, `"done":true`) {
				t.Fatalf("start_run did not wait for its run to end: %s", a.body)
			}
		}, state: session},
		{name: "mcp remember", prepare: func(x *target) request {
			return tool(alice, "remember", map[string]any{"key": "mcp-kept", "value": map[string]any{"editor": "vim"}})
		}, state: func(x *target) string { return h.get(alice, "/v1/memories/notes/mcp-kept") }},
		{name: "mcp compact_session", prepare: func(x *target) request {
			fresh(x)
			must(t, h.srv.url, alice, "POST", "/v1/sessions/"+x.id+"/messages", map[string]any{"messages": []map[string]string{
				{"role": "user", "content": "the plan is ZEBRA"}, {"role": "assistant", "content": "noted"}, {"role": "user", "content": "next"}}}, 201)
			return tool(alice, "compact_session", map[string]any{"session_id": x.id, "keep_last": 1})
		}, state: func(x *target) string { return h.get(alice, "/v1/sessions/"+x.id+"/compactions") }},
		{name: "mcp create_schedule", prepare: func(x *target) request {
			fresh(x)
			return tool(alice, "create_schedule", map[string]any{"session_id": x.id, "cron": "0 8 1 1 *", "timezone": "Europe/Paris", "message": "yearly"})
		}, state: func(x *target) string { return h.get(alice, "/v1/sessions/"+x.id+"/schedules") }},
		{name: "mcp pause_schedule", prepare: func(x *target) request {
			x.item = schedule(x, "skip")
			return tool(alice, "pause_schedule", map[string]any{"schedule_id": x.item})
		}, state: func(x *target) string { return h.get(alice, "/v1/schedules/"+x.item) }},
		{name: "mcp resume_schedule", prepare: func(x *target) request {
			x.item = schedule(x, "skip")
			must(t, h.srv.url, alice, "PATCH", "/v1/schedules/"+x.item, map[string]any{"paused": true}, 200)
			return tool(alice, "resume_schedule", map[string]any{"schedule_id": x.item})
		}, state: func(x *target) string { return h.get(alice, "/v1/schedules/"+x.item) }},
		{name: "mcp delete_schedule", prepare: func(x *target) request {
			x.item = schedule(x, "skip")
			return tool(alice, "delete_schedule", map[string]any{"schedule_id": x.item})
		}, state: func(x *target) string { return h.status(alice, "/v1/schedules/"+x.item) }},
		{name: "mcp run_schedule", prepare: func(x *target) request {
			x.item = schedule(x, "enqueue")
			return tool(alice, "run_schedule", map[string]any{"schedule_id": x.item})
		}, settle: func(x *target, a answer) { x.run = jsonField(t, a.body, "run_id"); waitRun(t, h.srv, alice, x.run) },
			state: func(x *target) string { return h.get(alice, "/v1/sessions/"+x.id+"/runs") }},
		{name: "mcp forget", prepare: func(x *target) request {
			must(t, h.srv.url, alice, "PUT", "/v1/memories/notes/mcp-gone", map[string]any{"value": "x"}, 200)
			return tool(alice, "forget", map[string]any{"namespace": "notes", "key": "mcp-gone"})
		}, state: func(x *target) string { return h.status(alice, "/v1/memories/notes/mcp-gone") }},
	}
	has := map[string]bool{}
	for _, c := range cases {
		has[strings.TrimPrefix(c.name, "mcp ")] = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := h.session(alice).ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		switch {
		case tl.Annotations != nil && tl.Annotations.ReadOnlyHint, has[tl.Name]:
		case noKeyTools[tl.Name] == "":
			t.Errorf("MCP tool %s writes and has no case in TestRepeatEveryWrite (nor a reason in noKeyTools)", tl.Name)
		default:
			m, isErr := mcpTool(t, h.session(alice), tl.Name, map[string]any{"request_id": "k"})
			if e, _ := m["error"].(map[string]any); !isErr || e["code"] != "invalid_request" || !strings.Contains(e["message"].(string), "request_id") {
				t.Errorf("MCP tool %s with request_id: %v, want invalid_request naming it", tl.Name, m)
			}
		}
	}
	return cases
}

// noKeyTools are the MCP tools that change something but take no request_id, as their /v1
// routes take no Idempotency-Key (noKeyRoutes), and why. Each refuses the argument.
var noKeyTools = map[string]string{
	"create_webhook":        noKeyRoutes["POST /v1/webhooks"],
	"rotate_webhook_secret": noKeyRoutes["POST /v1/webhooks/{id}/rotate"],
	"update_webhook":        noKeyRoutes["PATCH /v1/webhooks/{id}"],
	"delete_webhook":        noKeyRoutes["DELETE /v1/webhooks/{id}"],
	"redeliver_webhook":     noKeyRoutes["POST /v1/webhooks/{id}/deliveries/{did}/redeliver"],
	"learn_facts":           noKeyRoutes["POST /v1/sessions/{id}/extract"],
}

// session is an MCP client session over streamable HTTP (/mcp) as the user of key, made once per
// key and server process.
func (h *repeatHub) session(key string) *mcp.ClientSession {
	h.t.Helper()
	if cs := h.mcp[key]; cs != nil {
		return cs
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "carryon-repeat", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.srv.url + "/mcp", DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: bearer{key, &http.Transport{}}}}, nil)
	if err != nil {
		h.t.Fatalf("connect to /mcp: %v", err)
	}
	if h.mcp == nil {
		h.mcp = map[string]*mcp.ClientSession{}
	}
	h.mcp[key] = cs
	return cs
}

// bearer sends every request with the API key.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// compat sends a request of the compatible door (whose answers the native API's document, which
// http.DefaultTransport checks in these tests, does not describe); headers are "Name: value".
func (h *repeatHub) compat(req request, headers ...string) response {
	h.t.Helper()
	var rd io.Reader
	if req.body != nil {
		b, _ := json.Marshal(req.body)
		rd = bytes.NewReader(b)
	}
	r, err := http.NewRequest(req.method, h.srv.url+req.path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+req.key)
	for _, hd := range headers {
		k, v, _ := strings.Cut(hd, ": ")
		r.Header.Set(k, v)
	}
	res, err := (&http.Client{Transport: &http.Transport{}}).Do(r)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return response{res.StatusCode, res.Header, b}
}

// compatGet reads path of the compatible door as key: its status and body.
func (h *repeatHub) compatGet(key, path string) string {
	h.t.Helper()
	r := h.compat(request{method: "GET", path: path, key: key})
	return http.StatusText(r.status) + " " + string(r.body)
}

// jsonField is a string field of a JSON object.
func jsonField(t interface{ Fatalf(string, ...any) }, body, name string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("answer %s: %v", body, err)
	}
	s, _ := m[name].(string)
	return s
}

// version is the version session id is at.
func (h *repeatHub) version(id string) int64 {
	return int64(must(h.t, h.srv.url, h.admin, "GET", "/v1/sessions/"+id, nil, 200).json(h.t)["version"].(float64))
}
