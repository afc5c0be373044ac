package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool arguments pass the same input gate as request bodies: a name in another case, a name
// twice in an object, a NUL, a lone surrogate, a number beyond a float and nesting deeper than
// every client reads back are tool errors (invalid_request) that say what and where, and
// nothing is stored.
func TestGateOnToolArguments(t *testing.T) {
	t.Parallel()
	for name, opt := range stores(t, options{}) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testGateOnToolArguments(t, newEnv(t, opt))
		})
	}
}

func testGateOnToolArguments(t *testing.T, e *env) {
	cs := e.connect(e.aliceKey)
	s := ok(t, cs, "create_session", map[string]any{"title": "gate"})
	id, _ := s["id"].(string)
	deep := strings.Repeat(`[`, 200) + strings.Repeat(`]`, 200) // beyond 128, within what the SDKs read
	for _, c := range []struct{ tool, args, msg string }{
		{"append_messages", `{"session_id":"` + id + `","MESSAGES":[{"role":"user","content":"x"}]}`, `\"MESSAGES\"`},
		{"append_messages", `{"session_id":"` + id + `","messages":[{"role":"user","ROLE":"system","content":"x"}]}`, `\"ROLE\"`},
		{"append_messages", `{"session_id":"` + id + `","messages":[{"role":"user","role":"system","content":"x"}]}`, `duplicate field \"role\" in messages[0]`},
		{"append_messages", `{"session_id":"` + id + `","messages":[{"role":"user","content":"\ud800"}]}`, "lone UTF-16 surrogate"},
		{"remember", `{"key":"k","value":{"a":1,"a":2}}`, `duplicate field \"a\" in value`},
		{"remember", `{"key":"k","value":{"a":"\u0000"}}`, "value.a contains a NUL character"},
		{"remember", `{"key":"k","value":` + deep + `}`, "nested more than 128 levels deep"},
		{"update_working_memory", `{"session_id":"` + id + `","patch":{"goal":` + deep + `}}`, "nested more than 128 levels deep"},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: json.RawMessage(c.args)})
		if err != nil {
			t.Fatalf("%s: protocol error %v", c.tool, err)
		}
		if got := text(res); !res.IsError || !strings.Contains(got, `"code":"invalid_request"`) || !strings.Contains(got, c.msg) {
			t.Errorf("%s %.120s: %s, want a tool error with %s", c.tool, c.args, got, c.msg)
		}
	}
	got := ok(t, cs, "get_session", map[string]any{"session_id": id})
	if msgs, _ := got["messages"].([]any); len(msgs) != 0 || got["version"] != s["version"] {
		t.Fatalf("the session changed: %v", got)
	}
	if r := ok(t, cs, "recall", map[string]any{"query": ""}); len(r["items"].([]any)) != 0 {
		t.Fatalf("something was remembered: %v", r)
	}
}
