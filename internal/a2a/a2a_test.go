package a2a_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
)

// TestCardsArePublic: the default profile's card is at the well-known path (and under /a2a),
// a named profile's under /a2a/{name}/, all without a key; each names its JSON-RPC URL, the
// bearer scheme and skills from the profile's tools (the writer's write_file says it waits for
// approval). The endpoints themselves need the key: without one the answer is 401 as a JSON-RPC
// error with WWW-Authenticate, and a card's path takes no POST.
func TestCardsArePublic(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for path, want := range map[string]struct{ name, url string }{
		"/.well-known/agent-card.json":            {"default", e.url + "/a2a"},
		"/a2a/.well-known/agent-card.json":        {"default", e.url + "/a2a"},
		"/a2a/writer/.well-known/agent-card.json": {"writer", e.url + "/a2a/writer"},
	} {
		a := e.get(path)
		var c struct {
			Name                string
			SupportedInterfaces []struct{ URL, ProtocolBinding, ProtocolVersion string }
			Capabilities        struct{ Streaming bool }
			SecuritySchemes     map[string]struct {
				HTTPAuthSecurityScheme *struct{ Scheme string } `json:"httpAuthSecurityScheme"`
			}
			Skills []struct {
				ID, Description string
				Tags            []string
			}
		}
		if a.status != 200 || json.Unmarshal(a.body, &c) != nil {
			t.Fatalf("GET %s = %d %s", path, a.status, a.body)
		}
		if c.Name != want.name || len(c.SupportedInterfaces) == 0 || c.SupportedInterfaces[0].URL != want.url ||
			c.SupportedInterfaces[0].ProtocolBinding != "JSONRPC" || c.SupportedInterfaces[0].ProtocolVersion != "1.0" || !c.Capabilities.Streaming {
			t.Fatalf("GET %s = %s", path, a.body)
		}
		if s := c.SecuritySchemes["bearer"].HTTPAuthSecurityScheme; s == nil || s.Scheme != "Bearer" {
			t.Fatalf("GET %s: security schemes %s", path, a.body)
		}
		hasWrite := false
		for _, s := range c.Skills {
			if len(s.Tags) == 0 {
				t.Fatalf("GET %s: skill %s has no tags (the spec requires them)", path, s.ID)
			}
			if s.ID == "write_file" {
				hasWrite = strings.Contains(s.Description, "approval")
			}
		}
		if hasWrite != (want.name == "writer") {
			t.Fatalf("GET %s: skills %+v", path, c.Skills)
		}
	}
	if a := e.get("/a2a/nobody/.well-known/agent-card.json"); a.status != 401 {
		t.Fatalf("the card of no profile = %d %s; want the 401 of a path that is not public", a.status, a.body)
	}
	a := e.call("/a2a", "", "GetTask", `{"id":"run_x"}`)
	wantError(t, a, http.StatusUnauthorized, -32600)
	if a.header.Get("WWW-Authenticate") == "" {
		t.Fatal("the 401 has no WWW-Authenticate")
	}
	wantError(t, e.post("/.well-known/agent-card.json", "", `{}`), http.StatusMethodNotAllowed, -32600)
	if a := e.get("/.well-known/agent-card.json"); strings.Contains(string(a.body), "Write plainly") {
		t.Fatal("the default card shows instructions")
	}
	if a := e.get("/a2a/writer/.well-known/agent-card.json"); strings.Contains(string(a.body), "Write plainly") {
		t.Fatalf("the public card shows the profile's instructions: %s", a.body)
	}
}

// TestSendContinueAndRetry, on each store: a send without contextId starts a task on a new
// context and blocks until it completed, with the reply as its artifact and status message; the
// same messageId again is the same task and appends nothing; a send with the contextId is a new
// task in the same session; GetTask reads a task; a message on a completed task is refused.
func TestSendContinueAndRetry(t *testing.T) {
	t.Parallel()
	for name, start := range envDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := start(t)
			first := sent(t, e.call("/a2a", e.aliceKey, "SendMessage", sendParams("m-1", "Plan a trip to Oslo", "")))
			if first.Status.State != "TASK_STATE_COMPLETED" || first.ContextID == "" || !strings.Contains(first.reply(), "Plan a trip to Oslo") {
				t.Fatalf("first = %+v", first)
			}
			again := sent(t, e.call("/a2a", e.aliceKey, "SendMessage", sendParams("m-1", "Plan a trip to Oslo", "")))
			if again.ID != first.ID || again.ContextID != first.ContextID || again.reply() != first.reply() {
				t.Fatalf("the retried send = %+v, want the first task %+v", again, first)
			}
			second := sent(t, e.call("/a2a", e.aliceKey, "SendMessage", sendParams("m-2", "continue", `"contextId":"`+first.ContextID+`"`)))
			if second.ContextID != first.ContextID || second.ID == first.ID || second.Status.State != "TASK_STATE_COMPLETED" {
				t.Fatalf("second = %+v", second)
			}
			if got := e.userMessages(first.ContextID); len(got) != 2 || got[0] != "Plan a trip to Oslo" || got[1] != "continue" {
				t.Fatalf("the context's user messages = %q", got)
			}
			got := gotTask(t, e.call("/a2a", e.aliceKey, "GetTask", `{"id":"`+first.ID+`"}`))
			if got.ID != first.ID || got.reply() != first.reply() || got.Status.State != "TASK_STATE_COMPLETED" {
				t.Fatalf("GetTask = %+v", got)
			}
			wantError(t, e.call("/a2a", e.aliceKey, "SendMessage", sendParams("m-3", "more", `"taskId":"`+first.ID+`"`)), 200, -32004)
			wantError(t, e.call("/a2a", e.aliceKey, "CancelTask", `{"id":"`+first.ID+`"}`), 200, -32002)
		})
	}
}

// TestAnotherUsersIDs, on each store: bob naming alice's task or context gets the spec's
// task-not-found, exactly as for an id that does not exist, for every method; nothing is
// written to alice's session and no session of bob's is made in its place.
func TestAnotherUsersIDs(t *testing.T) {
	t.Parallel()
	for name, start := range envDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := start(t)
			tk := sent(t, e.call("/a2a", e.aliceKey, "SendMessage", sendParams("a-1", "hello", "")))
			for _, c := range []struct{ method, params string }{
				{"GetTask", `{"id":"` + tk.ID + `"}`},
				{"CancelTask", `{"id":"` + tk.ID + `"}`},
				{"SubscribeToTask", `{"id":"` + tk.ID + `"}`},
				{"tasks/get", `{"id":"` + tk.ID + `"}`},
				{"SendMessage", sendParams("b-1", "hijack", `"contextId":"`+tk.ContextID+`"`)},
				{"SendMessage", sendParams("b-2", "approve", `"taskId":"`+tk.ID+`"`)},
				{"SendStreamingMessage", sendParams("b-3", "hijack", `"contextId":"`+tk.ContextID+`"`)},
			} {
				theirs := e.call("/a2a", e.bobKey, c.method, c.params)
				wantError(t, theirs, 200, -32001)
				missing := e.call("/a2a", e.bobKey, c.method, strings.NewReplacer(tk.ID, "run_nonexistent0000000000000", tk.ContextID, "sess_nonexistent000000000000").Replace(c.params))
				wantError(t, missing, 200, -32001)
			}
			if got := e.userMessages(tk.ContextID); len(got) != 1 || got[0] != "hello" {
				t.Fatalf("alice's context after bob's tries = %q", got)
			}
		})
	}
}

// TestBadInput: what is not a JSON-RPC request, or not an A2A call this endpoint takes, is the
// JSON-RPC error of its kind with a message, and writes nothing (alice has no session after).
func TestBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	msg := func(parts string) string {
		return `{"message":{"messageId":"x-1","role":"ROLE_USER","parts":` + parts + `}}`
	}
	for _, c := range []struct {
		name, body   string
		status, code int
	}{
		{"not JSON", `{"jsonrpc":`, 200, -32700},
		{"a batch", `[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}]`, 200, -32600},
		{"not an object", `"GetTask"`, 200, -32600},
		{"no jsonrpc", `{"id":1,"method":"GetTask","params":{"id":"x"}}`, 200, -32600},
		{"a notification", `{"jsonrpc":"2.0","method":"GetTask","params":{"id":"x"}}`, 200, -32600},
		{"an unknown member", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"},"extra":1}`, 200, -32600},
		{"a name twice", `{"jsonrpc":"2.0","id":1,"id":2,"method":"GetTask","params":{"id":"x"}}`, 200, -32600},
		{"a NUL", `{"jsonrpc":"2.0","id":1,"method":"Get\u0000Task","params":{"id":"x"}}`, 200, -32600},
		{"a name twice in params", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","id":"y"}}`, 200, -32602},
		{"a NUL in params", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + msg(`[{"text":"a\u0000b"}]`) + `}`, 200, -32602},
		{"an unknown method", `{"jsonrpc":"2.0","id":1,"method":"tasks/send","params":{}}`, 200, -32601},
		{"push notifications", `{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{}}`, 200, -32004},
		{"no params", `{"jsonrpc":"2.0","id":1,"method":"SendMessage"}`, 200, -32602},
		{"params not an object", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":[1]}`, 200, -32602},
		{"no message", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`, 200, -32602},
		{"an unknown param", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"mesage":{}}}`, 200, -32602},
		{"an agent's message", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"x","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}}`, 200, -32602},
		{"no messageId", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","parts":[{"text":"hi"}]}}}`, 200, -32602},
		{"no parts", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + msg(`[]`) + `}`, 200, -32602},
		{"an empty part", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + msg(`[{}]`) + `}`, 200, -32602},
		{"a file", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + msg(`[{"url":"https://example.com/a.png"}]`) + `}`, 200, -32005},
		{"a data part that starts a task", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + msg(`[{"text":"hi"},{"data":{"decision":"approve"}}]`) + `}`, 200, -32602},
		{"a push config", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"x","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"taskPushNotificationConfig":{"url":"https://example.com"}}}}`, 200, -32003},
		{"an unknown carryon metadata field", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"x","role":"ROLE_USER","parts":[{"text":"hi"}]},"metadata":{"carryon":{"tool":[]}}}}`, 200, -32602},
		{"a task without id", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}`, 200, -32602},
		{"too large", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + msg(`[{"text":"`+strings.Repeat("a", maxBody)+`"}]`) + `}`, 413, -32600},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := e.post("/a2a", e.aliceKey, c.body)
			wantError(t, a, c.status, c.code)
			if c.code != -32700 && c.code != -32600 && string(a.rpc.ID) != "1" {
				t.Fatalf("the error's id = %s, want the request's", a.rpc.ID)
			}
		})
	}
	page, err := e.sessions.List(e.alice, carryon.SessionFilter{})
	if err != nil || len(page.Items) != 0 {
		t.Fatalf("after the refusals alice has sessions %v (%v)", page, err)
	}
}

// TestApprovalIsInputRequired, on each store: a tool marked approval: always makes the task
// input-required, its status message naming the tool with a data part for the decision; the
// next message on the task ("approve") runs the tool once and the task completes; the same
// message again (its messageId) is not applied twice; a reject in a data part with a reason
// completes the task without running the tool; an answer that is neither is refused.
func TestApprovalIsInputRequired(t *testing.T) {
	t.Parallel()
	for name, start := range envDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := start(t)
			write := `/tool write_file {"path":"notes.md","content":"approved\n"}`
			ask := sent(t, e.call("/a2a/writer", e.aliceKey, "SendMessage", sendParams("w-1", write, "")))
			if ask.Status.State != "TASK_STATE_INPUT_REQUIRED" || ask.Status.Message == nil || len(ask.Status.Message.Parts) != 2 ||
				!strings.Contains(*ask.Status.Message.Parts[0].Text, "write_file") || !strings.Contains(string(ask.Status.Message.Parts[1].Data), `"action_id"`) {
				t.Fatalf("ask = %s", must(json.Marshal(ask)))
			}
			wantError(t, e.call("/a2a/writer", e.aliceKey, "SendMessage", sendParams("w-2", "maybe", `"taskId":"`+ask.ID+`"`)), 200, -32602)
			done := sent(t, e.call("/a2a/writer", e.aliceKey, "SendMessage", sendParams("w-3", "approve", `"taskId":"`+ask.ID+`","contextId":"`+ask.ContextID+`"`)))
			if done.ID != ask.ID || done.Status.State != "TASK_STATE_COMPLETED" {
				t.Fatalf("after approve = %+v", done)
			}
			again := sent(t, e.call("/a2a/writer", e.aliceKey, "SendMessage", sendParams("w-3", "approve", `"taskId":"`+ask.ID+`"`)))
			if again.ID != ask.ID || again.Status.State != "TASK_STATE_COMPLETED" {
				t.Fatalf("the repeated approve = %+v", again)
			}
			acts, err := e.runs.Actions(e.alice, ask.ID)
			if err != nil || len(acts) != 1 || acts[0].Approval != carryon.ApprovalApproved || acts[0].Status != carryon.ActionSucceeded {
				t.Fatalf("journal = %+v, %v; want one approved call that ran", acts, err)
			}
			ask2 := sent(t, e.call("/a2a/writer", e.aliceKey, "SendMessage", sendParams("w-4", write, "")))
			// w-3 answered the first task, of another context: it is not taken as this one's answer.
			wantError(t, e.call("/a2a/writer", e.aliceKey, "SendMessage", sendParams("w-3", "approve", `"taskId":"`+ask2.ID+`"`)), 200, -32602)
			params := fmt.Sprintf(`{"message":{"messageId":"w-5","role":"ROLE_USER","taskId":%q,"parts":[{"data":{"decision":"reject","reason":"not now"}}]}}`, ask2.ID)
			rejected := sent(t, e.call("/a2a/writer", e.aliceKey, "SendMessage", params))
			if rejected.Status.State != "TASK_STATE_COMPLETED" {
				t.Fatalf("after reject = %+v", rejected)
			}
			if acts, err := e.runs.Actions(e.alice, ask2.ID); err != nil || len(acts) != 1 || acts[0].Approval != carryon.ApprovalRejected {
				t.Fatalf("journal after reject = %+v, %v", acts, err)
			}
		})
	}
}

// TestClientToolIsInputRequired: a tool the client declares (metadata.carryon.tools) makes the
// task input-required with the call in a data part; the text of the next message on the task
// is the output, and the task completes with a reply that used it.
func TestClientToolIsInputRequired(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	params := `{"message":{"messageId":"c-1","role":"ROLE_USER","parts":[{"text":"/tool get_weather {\"city\":\"Oslo\"}"}]},` +
		`"metadata":{"carryon":{"tools":[{"name":"get_weather","description":"The weather in a city.","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]}}}`
	ask := sent(t, e.call("/a2a", e.aliceKey, "SendMessage", params))
	if ask.Status.State != "TASK_STATE_INPUT_REQUIRED" || ask.Status.Message == nil || len(ask.Status.Message.Parts) != 2 ||
		!strings.Contains(string(ask.Status.Message.Parts[1].Data), "get_weather") {
		t.Fatalf("ask = %s", must(json.Marshal(ask)))
	}
	done := sent(t, e.call("/a2a", e.aliceKey, "SendMessage", sendParams("c-2", "sunny, 21 degrees", `"taskId":"`+ask.ID+`"`)))
	if done.ID != ask.ID || done.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("after the output = %+v", done)
	}
	run, err := e.runs.GetRun(e.alice, ask.ID)
	if err != nil || run.Status != carryon.RunSucceeded {
		t.Fatalf("run = %+v, %v", run, err)
	}
}

// TestStreamsInBothDialects: SendStreamingMessage answers Server-Sent Events, each a JSON-RPC
// response with the request's id: the task first, then status and artifact updates, the last a
// completed status, the artifacts adding up to the reply GetTask reads; message/stream (0.3)
// streams the same in 0.3's shapes (kind, lowercase states, final on the last event).
func TestStreamsInBothDialects(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct {
		method, kindTask, completed, msg string
	}{
		{"SendStreamingMessage", "", "TASK_STATE_COMPLETED", `{"messageId":"s-1","role":"ROLE_USER","parts":[{"text":"Stream a plan"}]}`},
		{"message/stream", "task", "completed", `{"kind":"message","messageId":"s-2","role":"user","parts":[{"kind":"text","text":"Stream a plan"}]}`},
	} {
		a := e.post("/a2a", e.aliceKey, `{"jsonrpc":"2.0","id":7,"method":"`+c.method+`","params":{"message":`+c.msg+`}}`, "Accept", "text/event-stream")
		if a.status != 200 || !strings.HasPrefix(a.header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("%s = %d %s %s", c.method, a.status, a.header.Get("Content-Type"), a.body)
		}
		var events []map[string]json.RawMessage
		for _, block := range dataBlocks(a.body) {
			var data string
			for _, line := range strings.Split(block, "\n") {
				if d, ok := strings.CutPrefix(line, "data: "); ok {
					data = d
				}
			}
			var r struct {
				JSONRPC string                     `json:"jsonrpc"`
				ID      int                        `json:"id"`
				Result  map[string]json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal([]byte(data), &r); err != nil || r.JSONRPC != "2.0" || r.ID != 7 || r.Result == nil {
				t.Fatalf("%s: event %q", c.method, block)
			}
			events = append(events, r.Result)
		}
		if len(events) < 3 {
			t.Fatalf("%s: %d events: %s", c.method, len(events), a.body)
		}
		var taskID, reply, lastState string
		var final bool
		for i, ev := range events {
			var body map[string]json.RawMessage
			kind := ""
			if c.kindTask == "" {
				for k, v := range ev {
					kind, body = k, nil
					_ = json.Unmarshal(v, &body)
				}
			} else {
				body = ev
				_ = json.Unmarshal(ev["kind"], &kind)
			}
			switch kind {
			case "task":
				if i != 0 {
					t.Fatalf("%s: a task event at %d", c.method, i)
				}
				_ = json.Unmarshal(body["id"], &taskID)
			case "artifactUpdate", "artifact-update":
				var u struct {
					Append   bool
					Artifact struct{ Parts []struct{ Text string } }
				}
				_ = json.Unmarshal(mustJSON(body), &u)
				if !u.Append {
					reply = ""
				}
				reply += u.Artifact.Parts[0].Text
			case "statusUpdate", "status-update":
				var u struct {
					Status struct{ State string }
					Final  bool
				}
				_ = json.Unmarshal(mustJSON(body), &u)
				lastState, final = u.Status.State, u.Final
			default:
				t.Fatalf("%s: event %d of kind %q", c.method, i, kind)
			}
		}
		run, err := e.runs.GetRun(e.alice, taskID)
		if err != nil || lastState != c.completed || reply != run.Reply || reply == "" || (c.kindTask != "") != final {
			t.Fatalf("%s: last state %q (final %v), reply %q; the run's %q (%v)", c.method, lastState, final, reply, run.Reply, err)
		}
	}
}

func must(b []byte, _ error) string { return string(b) }

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// TestCancel, on each store: a task started with returnImmediately is submitted or working;
// CancelTask stops it and answers it canceled; a second cancel is A2A's task-not-cancelable.
func TestCancel(t *testing.T) {
	t.Parallel()
	for name, start := range envDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := start(t)
			params := `{"message":{"messageId":"k-1","role":"ROLE_USER","parts":[{"text":"take your time"}]},"configuration":{"returnImmediately":true}}`
			tk := sent(t, e.call("/a2a/slow", e.aliceKey, "SendMessage", params))
			if tk.Status.State != "TASK_STATE_SUBMITTED" && tk.Status.State != "TASK_STATE_WORKING" {
				t.Fatalf("the task at once = %+v", tk)
			}
			got := gotTask(t, e.call("/a2a/slow", e.aliceKey, "CancelTask", `{"id":"`+tk.ID+`"}`))
			if got.ID != tk.ID || got.Status.State != "TASK_STATE_CANCELED" {
				t.Fatalf("cancel = %+v", got)
			}
			if run, err := e.runs.GetRun(e.alice, tk.ID); err != nil || run.Status != carryon.RunCancelled {
				t.Fatalf("run = %+v, %v", run, err)
			}
			wantError(t, e.call("/a2a/slow", e.aliceKey, "CancelTask", `{"id":"`+tk.ID+`"}`), 200, -32002)
		})
	}
}

// TestSubscribeResumesAfterLastEventID: SubscribeToTask of an ended task answers its final
// state; with Last-Event-ID (SSE's reconnection, the id of an event of an earlier stream) it
// sends no snapshot, only what came after that event, which completes the reply.
func TestSubscribeResumesAfterLastEventID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tk := sent(t, e.call("/a2a", e.aliceKey, "SendMessage", sendParams("r-1", "Plan a long trip", "")))
	events := func(a *answer) (ids []string, kinds []string, reply string) {
		for _, block := range dataBlocks(a.body) {
			var data string
			for _, line := range strings.Split(block, "\n") {
				if v, ok := strings.CutPrefix(line, "id: "); ok {
					ids = append(ids, v)
				}
				if v, ok := strings.CutPrefix(line, "data: "); ok {
					data = v
				}
			}
			var r struct {
				Result map[string]struct {
					Append   bool
					Artifact struct{ Parts []struct{ Text string } }
				}
			}
			if err := json.Unmarshal([]byte(data), &r); err != nil {
				t.Fatalf("event %q: %v", block, err)
			}
			for k, v := range r.Result {
				kinds = append(kinds, k)
				if k == "artifactUpdate" {
					if !v.Append {
						reply = ""
					}
					reply += v.Artifact.Parts[0].Text
				}
			}
		}
		return
	}
	whole := e.call("/a2a", e.aliceKey, "SubscribeToTask", `{"id":"`+tk.ID+`"}`)
	if _, kinds, _ := events(whole); len(kinds) != 1 || kinds[0] != "task" {
		t.Fatalf("subscribing to an ended task = %s; want its task alone", whole.body)
	}
	req := `{"jsonrpc":"2.0","id":"req-1","method":"SubscribeToTask","params":{"id":"` + tk.ID + `"}}`
	resumed := e.post("/a2a", e.aliceKey, req, "Last-Event-ID", "1")
	ids, kinds, reply := events(resumed)
	if len(kinds) < 3 || kinds[0] != "statusUpdate" || kinds[len(kinds)-1] != "statusUpdate" || reply != tk.reply() || ids[0] == "1" {
		t.Fatalf("resumed after event 1 = %v %v, reply %q; want the rest of the task, reply %q", ids, kinds, reply, tk.reply())
	}
	last := ids[len(ids)-1]
	if after := e.post("/a2a", e.aliceKey, req, "Last-Event-ID", last); len(dataBlocks(after.body)) != 0 {
		t.Fatalf("resumed after the last event = %q; want nothing", after.body)
	}
}

// TestQuietStreamKeepsAlive: while a task's model step is slow, its stream gets SSE comments
// (which clients skip) so that the connection stays open through proxies.
func TestQuietStreamKeepsAlive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	params := `{"message":{"messageId":"q-1","role":"ROLE_USER","parts":[{"text":"slowly"}]},"configuration":{"returnImmediately":true}}`
	tk := sent(t, e.call("/a2a/slow", e.aliceKey, "SendMessage", params))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/a2a/slow", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"`+tk.ID+`"}}`))
	req.Header.Set("Authorization", "Bearer "+e.aliceKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(got.String(), ": keep-alive\n\n") {
		n, err := res.Body.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			t.Fatalf("the stream ended (%v) without a keep-alive: %q", err, got.String())
		}
	}
	if !strings.HasPrefix(got.String(), "id: ") {
		t.Fatalf("the stream = %q; want the task first", got.String())
	}
}

// dataBlocks are the events of an SSE body, without the comments (keep-alives).
func dataBlocks(body []byte) []string {
	var out []string
	for _, block := range strings.Split(strings.TrimSpace(string(body)), "\n\n") {
		if block = strings.TrimSpace(block); block != "" && !strings.HasPrefix(block, ":") {
			out = append(out, block)
		}
	}
	return out
}
