package agui_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
)

// A run on a new thread streams the AG-UI sequence: RUN_STARTED, STATE_SNAPSHOT, the reply as
// one text message, MESSAGES_SNAPSHOT with carryon's ids, RUN_FINISHED. The next input sends the
// thread back (snapshot ids) with one new message: only that one is appended, and the model sees
// both turns. The same runId again starts no second run and appends nothing.
func TestRunOnNewThread(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		a := e.post(t, e.aliceKey, input("thread-1", "run-1", user("u1", "hello")))
		want := []string{"RUN_STARTED", "STATE_SNAPSHOT", "TEXT_MESSAGE_START"}
		if got := a.types(); a.status != 200 || len(got) < 6 || !reflect.DeepEqual(got[:3], want) {
			t.Fatalf("answer %d, events %v, body %s", a.status, got, a.body)
		}
		if got := a.types(); got[len(got)-3] != "TEXT_MESSAGE_END" || got[len(got)-2] != "MESSAGES_SNAPSHOT" || got[len(got)-1] != "RUN_FINISHED" {
			t.Fatalf("events end %v", got)
		}
		if a.events[0]["threadId"] != "thread-1" || a.events[0]["runId"] != "run-1" {
			t.Fatalf("RUN_STARTED = %v", a.events[0])
		}
		if a.text() != "You said: hello (1 user messages)" {
			t.Fatalf("text = %q", a.text())
		}
		if o := a.last(t)["outcome"].(map[string]any); o["type"] != "success" {
			t.Fatalf("RUN_FINISHED = %v", a.last(t))
		}
		snap := a.snapshot(t)
		if len(snap) != 2 || snap[0].(map[string]any)["role"] != "user" || snap[1].(map[string]any)["content"] != "You said: hello (1 user messages)" {
			t.Fatalf("snapshot = %v", snap)
		}
		page, err := e.sessions.List(e.alice, carryon.SessionFilter{ExternalID: "thread-1"})
		if err != nil || len(page.Items) != 1 {
			t.Fatalf("the thread's session: %v, %v", page, err)
		}
		sess := page.Items[0]
		if id := snap[0].(map[string]any)["id"].(string); !strings.HasPrefix(id, sess.ID+":") {
			t.Fatalf("snapshot id %q is not of session %s", id, sess.ID)
		}

		second := input("thread-1", "run-2", append(snap, user("u2", "again"))...)
		b := e.post(t, e.aliceKey, second)
		if b.text() != "You said: again (2 user messages)" {
			t.Fatalf("second text = %q (events %v, body %s)", b.text(), b.types(), b.body)
		}
		if n := len(b.snapshot(t)); n != 4 {
			t.Fatalf("second snapshot has %d messages, want 4", n)
		}
		c := e.post(t, e.aliceKey, second)
		if c.text() != b.text() || len(c.snapshot(t)) != 4 {
			t.Fatalf("the repeat: text %q, %d messages", c.text(), len(c.snapshot(t)))
		}
		runs, err := e.runs.ListRuns(e.alice, sess.ID, carryon.RunFilter{})
		if err != nil || len(runs.Items) != 2 || runs.Items[0].RequestID != "run-2" {
			t.Fatalf("runs after the repeat: %v, %v", runs, err)
		}
	})
}

// The input's state is a merge patch on the working memory (STATE_SNAPSHOT shows it applied);
// a run that changes the memory streams STATE_DELTA patches whose result, applied to the
// snapshot, is the working memory the native API answers at the run's end. The server tool's
// call and result are TOOL_CALL_* events.
func TestStateSnapshotAndDeltas(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		in := input("thread-s", "run-s1", user("u1", "remember ship it"))
		in["state"] = map[string]any{"notes": "draft", "n": 12345678901234567}
		a := e.post(t, e.aliceKey, in)
		for _, ev := range a.events {
			b, _ := json.Marshal(ev)
			t.Log(string(b))
		}
		snap := a.of("STATE_SNAPSHOT")
		if a.status != 200 || len(snap) != 1 {
			t.Fatalf("answer %d %v %s", a.status, a.types(), a.body)
		}
		doc := snap[0]["snapshot"]
		if m := doc.(map[string]any); m["notes"] != "draft" {
			t.Fatalf("snapshot = %v", doc)
		}
		deltas := a.of("STATE_DELTA")
		if len(deltas) == 0 {
			t.Fatalf("no STATE_DELTA in %v", a.types())
		}
		for _, d := range deltas {
			doc = applyPatch(t, doc, d["delta"].([]any))
		}
		page, _ := e.sessions.List(e.alice, carryon.SessionFilter{ExternalID: "thread-s"})
		wm, err := e.sessions.GetWorkingMemory(e.alice, page.Items[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		var native any
		b, _ := json.Marshal(wm.WorkingMemory)
		_ = json.Unmarshal(b, &native)
		if !reflect.DeepEqual(doc, native) {
			t.Fatalf("patched snapshot = %v, GET memory = %v", doc, native)
		}
		if g := native.(map[string]any); g["goal"] != "ship it" || g["notes"] != nil {
			t.Fatalf("memory = %v", native)
		}
		starts := a.of("TOOL_CALL_START")
		results := a.of("TOOL_CALL_RESULT")
		if len(starts) != 1 || starts[0]["toolCallName"] != "update_working_memory" || len(results) != 1 || results[0]["toolCallId"] != "call_m1" {
			t.Fatalf("tool events: %v / %v in %v", starts, results, a.types())
		}
		if a.text() != "Done: "+results[0]["content"].(string) {
			t.Fatalf("text = %q", a.text())
		}
	})
}

// applyPatch applies the add, remove and replace operations of an RFC 6902 patch.
func applyPatch(t *testing.T, doc any, ops []any) any {
	t.Helper()
	for _, raw := range ops {
		op := raw.(map[string]any)
		path := op["path"].(string)
		if path == "" {
			doc = op["value"]
			continue
		}
		parts := strings.Split(path[1:], "/")
		cur := doc.(map[string]any)
		for _, p := range parts[:len(parts)-1] {
			cur = cur[unescape(p)].(map[string]any)
		}
		key := unescape(parts[len(parts)-1])
		switch op["op"] {
		case "add", "replace":
			cur[key] = op["value"]
		case "remove":
			delete(cur, key)
		default:
			t.Fatalf("op %v", op)
		}
	}
	return doc
}

func unescape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// A client tool: the run ends with RUN_FINISHED naming the pending call after its
// TOOL_CALL_START/ARGS/END; the next input's tool message is the output the run waits for, and
// the run goes on in the new stream.
func TestClientToolRoundTrip(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		in := input("thread-c", "run-c1", user("u1", "what is the weather?"))
		in["tools"] = []any{map[string]any{"name": "get_weather", "description": "The weather of a city.", "parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}
		a := e.post(t, e.aliceKey, in)
		o, _ := a.last(t)["outcome"].(map[string]any)
		if o == nil || o["type"] != "success" || !reflect.DeepEqual(o["pendingToolCallIds"], []any{"call_w1"}) {
			t.Fatalf("last = %v (%v)", a.last(t), a.types())
		}
		calls := a.of("TOOL_CALL_START")
		args := a.of("TOOL_CALL_ARGS")
		if len(calls) != 1 || calls[0]["toolCallName"] != "get_weather" || len(args) != 1 || args[0]["delta"] != `{"city":"Oslo"}` || len(a.of("TOOL_CALL_END")) != 1 {
			t.Fatalf("tool call events in %v: %v %v", a.types(), calls, args)
		}
		msgs := append(a.snapshot(t), map[string]any{"id": "tool-1", "role": "tool", "toolCallId": "call_w1", "content": "sunny"})
		next := input("thread-c", "run-c2", msgs...)
		next["tools"] = in["tools"]
		b := e.post(t, e.aliceKey, next)
		if b.text() != "Done: sunny" || b.last(t)["type"] != "RUN_FINISHED" {
			t.Fatalf("after the output: %q, %v %s", b.text(), b.types(), b.body)
		}
		if len(b.of("TOOL_CALL_RESULT")) != 0 {
			t.Fatalf("the client's own result came back: %v", b.of("TOOL_CALL_RESULT"))
		}
		again := e.post(t, e.aliceKey, next)
		if again.text() != "Done: sunny" {
			t.Fatalf("the repeat: %q %v %s", again.text(), again.types(), again.body)
		}
	})
}

// A tool that asks for approval ends the AG-UI run with an interrupt outcome; the next input's
// resume entry approves it and the run goes on.
func TestApprovalInterrupt(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		a := e.post(t, e.aliceKey, input("thread-a", "run-a1", user("u1", "count one")))
		o, _ := a.last(t)["outcome"].(map[string]any)
		if o == nil || o["type"] != "interrupt" {
			t.Fatalf("last = %v (%v)", a.last(t), a.types())
		}
		in := o["interrupts"].([]any)[0].(map[string]any)
		if in["reason"] != "tool_approval" || in["toolCallId"] != "call_t1" || in["id"] == "" {
			t.Fatalf("interrupt = %v", in)
		}
		next := input("thread-a", "run-a2", a.snapshot(t)...)
		next["resume"] = []any{map[string]any{"interruptId": in["id"], "status": "resolved"}}
		b := e.post(t, e.aliceKey, next)
		if !strings.HasPrefix(b.text(), "Done: counted") || b.last(t)["type"] != "RUN_FINISHED" {
			t.Fatalf("after the approval: %q %v %s", b.text(), b.types(), b.body)
		}
	})
}
