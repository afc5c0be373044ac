package mcpserver_test

import (
	"testing"
)

// TestRepeatedWriteToolsAnswerTheFirst: every tool that writes, called again with its request_id
// after it succeeded, answers what the first call answered (the same result but replayed: true)
// and changes nothing: not the session, not the long-term memory. The repeats come in the order
// that makes a fresh call fail (the message deleted, the item forgotten), so an answer that looked
// anything up again would differ.
func TestRepeatedWriteToolsAnswerTheFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	cs := e.connect(e.aliceKey)
	var sid string
	// state is what a repeat must leave as it was: the session (version, messages, working
	// memory) and the long-term items.
	state := func() string {
		s := "no session"
		if sid != "" {
			s = mustJSON(t, ok(t, cs, "get_session", map[string]any{"session_id": sid, "messages": 100}))
		}
		return s + mustJSON(t, ok(t, cs, "recall", map[string]any{"query": ""}))
	}
	for _, c := range []struct {
		tool string
		args func() map[string]any
	}{
		{"create_session", func() map[string]any { return map[string]any{"title": "repeats", "request_id": "create-1"} }},
		{"append_messages", func() map[string]any {
			return map[string]any{"session_id": sid, "request_id": "append-1", "messages": []any{
				map[string]any{"role": "user", "content": "first"}, map[string]any{"role": "assistant", "content": "second"}}}
		}},
		{"update_working_memory", func() map[string]any {
			return map[string]any{"session_id": sid, "request_id": "memory-1", "patch": map[string]any{"goal": "repeat safely"}}
		}},
		{"delete_message", func() map[string]any { return map[string]any{"session_id": sid, "seq": 1, "request_id": "delete-1"} }},
		{"start_run", func() map[string]any {
			return map[string]any{"session_id": sid, "message": "Task: check the repeats: first this, then that", "request_id": "run-1"}
		}},
		{"remember", func() map[string]any {
			return map[string]any{"key": "editor", "value": map[string]any{"name": "vim"}, "request_id": "remember-1"}
		}},
		{"forget", func() map[string]any {
			return map[string]any{"namespace": "notes", "key": "editor", "request_id": "forget-1"}
		}},
	} {
		first := ok(t, cs, c.tool, c.args())
		if first["replayed"] != false {
			t.Fatalf("%s: the first call says replayed %v", c.tool, first["replayed"])
		}
		if c.tool == "create_session" {
			sid, _ = first["id"].(string)
		}
		if c.tool == "start_run" && first["done"] != true {
			t.Fatalf("start_run: the run did not end within the wait: %v", first)
		}
		before := state()
		again := ok(t, cs, c.tool, c.args())
		if again["replayed"] != true {
			t.Errorf("%s: the repeat says replayed %v", c.tool, again["replayed"])
		}
		delete(first, "replayed")
		delete(again, "replayed")
		if a, b := mustJSON(t, first), mustJSON(t, again); a != b {
			t.Errorf("%s: the repeat answered\n%s\nthe first call\n%s", c.tool, b, a)
		}
		if after := state(); after != before {
			t.Errorf("%s: the repeat changed the state:\n%s\nto\n%s", c.tool, before, after)
		}
	}
}
