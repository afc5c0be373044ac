package mcpserver_test

import (
	"testing"
)

// compact_session is offered when the server has a summarizer and stores a compaction at the
// session's next version; another user's session is not_found; a server without one does not
// list the tool.
func TestCompactSessionTool(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{compact: true})
	alice, bob := e.connect(e.aliceKey), e.connect(e.bobKey)
	s := ok(t, alice, "create_session", map[string]any{"title": "long"})
	id := s["id"].(string)
	ok(t, alice, "append_messages", map[string]any{"session_id": id, "messages": []any{
		map[string]any{"role": "user", "content": "first"}, map[string]any{"role": "assistant", "content": "second"},
		map[string]any{"role": "user", "content": "third"}}})
	toolError(t, bob, "compact_session", map[string]any{"session_id": id}, "not_found")
	c := ok(t, alice, "compact_session", map[string]any{"session_id": id, "keep_last": 1, "expected_version": 2, "request_id": "c-1"})
	if c["covers_to"] != float64(2) || c["version"] != float64(3) || c["summary"] == "" {
		t.Fatalf("compact_session = %v, want a summary of messages 1-2 at version 3", c)
	}
	if again := ok(t, alice, "compact_session", map[string]any{"session_id": id, "keep_last": 1, "expected_version": 2, "request_id": "c-1"}); again["replayed"] != true || again["seq"] != c["seq"] {
		t.Fatalf("the repeat = %v, want the first answered as a replay", again)
	}
	plain := newEnv(t, options{})
	res, err := plain.connect(plain.aliceKey).ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name == "compact_session" {
			t.Fatal("a server without a summarizer lists compact_session")
		}
	}
}
