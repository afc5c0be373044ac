package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// validMessages checks messages as every writer may append them, a client or a run: known roles
// and kinds, text that is valid UTF-8 without NUL (carryon.CheckText) within its limits,
// tool_calls a JSON array of objects, metadata a JSON object without NUL, consistent summary
// ranges.
func validMessages(msgs []carryon.NewMessage) error {
	if len(msgs) == 0 {
		return carryon.Errorf(carryon.EINVALID, "messages must hold at least one message")
	}
	if len(msgs) > carryon.MaxAppendMessages {
		return carryon.Errorf(carryon.EINVALID, "messages holds %d messages; the limit is %d per request", len(msgs), carryon.MaxAppendMessages)
	}
	for i, m := range msgs {
		at := fmt.Sprintf("messages[%d]", i)
		if !m.Role.Valid() {
			return carryon.Errorf(carryon.EINVALID, "%s.role must be system, user, assistant or tool, not %q", at, m.Role)
		}
		if m.Kind != "" && m.Kind != carryon.KindMessage && m.Kind != carryon.KindSummary {
			return carryon.Errorf(carryon.EINVALID, "%s.kind must be message or summary, not %q", at, m.Kind)
		}
		for _, f := range []struct{ name, text string }{{"content", m.Content}, {"name", m.Name}, {"tool_call_id", m.ToolCallID}} {
			if err := carryon.CheckText(at+"."+f.name, f.text); err != nil {
				return err
			}
		}
		if len(m.Content) > maxContentBytes {
			return carryon.Errorf(carryon.EINVALID, "%s.content is %d bytes; the limit is %d", at, len(m.Content), maxContentBytes)
		}
		if m.Content == "" && len(m.ToolCalls) == 0 && m.Metadata == nil && m.Role != carryon.RoleTool || m.Content == "" && m.Kind == carryon.KindSummary {
			return carryon.Errorf(carryon.EINVALID, "%s.content is empty (only a message with tool_calls or metadata, or a tool result, may have none)", at)
		}
		if len(m.ToolCalls) > 0 {
			var calls []map[string]json.RawMessage
			if json.Unmarshal(m.ToolCalls, &calls) != nil {
				return carryon.Errorf(carryon.EINVALID, "%s.tool_calls must be a JSON array of tool calls (objects)", at)
			}
		}
		if m.Metadata != nil {
			var obj map[string]json.RawMessage // raw: a number too large for a float is CheckJSONText's to name
			if json.Unmarshal(m.Metadata, &obj) != nil || obj == nil {
				return carryon.Errorf(carryon.EINVALID, "%s.metadata must be a JSON object", at)
			}
			if err := carryon.CheckJSONText(at+".metadata", m.Metadata); err != nil {
				return err
			}
		}
		if m.Kind == carryon.KindSummary && (m.CoversFrom < 1 || m.CoversTo < m.CoversFrom) {
			return carryon.Errorf(carryon.EINVALID, "%s: a summary needs 1 <= covers_from <= covers_to", at)
		}
		if m.Kind != carryon.KindSummary && (m.CoversFrom != 0 || m.CoversTo != 0) {
			return carryon.Errorf(carryon.EINVALID, "%s: covers_from and covers_to are for summaries only", at)
		}
	}
	return nil
}

// toolCallShape is the shape a client's tool call must have, shown in errors.
const toolCallShape = `{"id": "call_1", "name": "tool_name", "arguments": {…}}`

// validClientMessages checks messages a client appends: the rules of validMessages, then those
// of a conversation a model API accepts. Tool calls are only on assistant messages and each has
// a non-empty id (unique in its message), a non-empty name and arguments that are a JSON object;
// tool_call_id is only on tool messages, and every tool message has one. It returns the tool
// messages whose call is not earlier in the same append, by tool_call_id, for findCalls to look
// up in the stored history.
func validClientMessages(msgs []carryon.NewMessage) (map[string]int, error) {
	if err := validMessages(msgs); err != nil {
		return nil, err
	}
	called := map[string]bool{}
	var pending map[string]int
	for i, m := range msgs {
		at := fmt.Sprintf("messages[%d]", i)
		if len(m.ToolCalls) > 0 {
			if m.Role != carryon.RoleAssistant {
				return nil, carryon.Errorf(carryon.EINVALID, "%s.tool_calls: only assistant messages call tools, not %s messages", at, m.Role)
			}
			ids, err := validToolCalls(at+".tool_calls", m.ToolCalls)
			if err != nil {
				return nil, err
			}
			// A run's calls come from the model, which may escape a NUL in its arguments: that
			// is stored (as JSON text) on every driver, and the tool refuses the arguments.
			if err := carryon.CheckJSONText(at+".tool_calls", m.ToolCalls); err != nil {
				return nil, err
			}
			for _, id := range ids {
				called[id] = true
			}
		}
		switch {
		case m.Role == carryon.RoleTool && m.ToolCallID == "":
			return nil, carryon.Errorf(carryon.EINVALID, "%s.tool_call_id is required: a tool message answers a tool call of an earlier assistant message by its id", at)
		case m.Role != carryon.RoleTool && m.ToolCallID != "":
			return nil, carryon.Errorf(carryon.EINVALID, "%s.tool_call_id is for tool messages only, not %s messages", at, m.Role)
		case m.Role == carryon.RoleTool && !called[m.ToolCallID]:
			if pending == nil {
				pending = map[string]int{}
			}
			if _, seen := pending[m.ToolCallID]; !seen {
				pending[m.ToolCallID] = i
			}
		}
	}
	return pending, nil
}

// validToolCalls checks the tool calls of one message (at names them) and returns their ids.
func validToolCalls(at string, raw json.RawMessage) ([]string, error) {
	var calls []map[string]json.RawMessage
	_ = json.Unmarshal(raw, &calls) // validMessages checked that it decodes
	seen := map[string]bool{}
	ids := make([]string, 0, len(calls))
	for j, c := range calls {
		ct := fmt.Sprintf("%s[%d]", at, j)
		if _, openAI := c["function"]; openAI {
			return nil, carryon.Errorf(carryon.EINVALID, "%s is in the OpenAI shape {\"id\", \"type\", \"function\": {\"name\", \"arguments\"}}; carryon stores tool calls as %s, with arguments a JSON object (not a string)", ct, toolCallShape)
		}
		var names []string
		for k := range c {
			if k != "id" && k != "name" && k != "arguments" {
				names = append(names, k)
			}
		}
		if len(names) > 0 {
			sort.Strings(names)
			return nil, carryon.Errorf(carryon.EINVALID, "%s has unknown field %q; a tool call is %s", ct, names[0], toolCallShape)
		}
		id, err := callString(c, "id", ct)
		if err != nil {
			return nil, err
		}
		if _, err := callString(c, "name", ct); err != nil {
			return nil, err
		}
		if args := bytes.TrimSpace(c["arguments"]); len(args) == 0 || args[0] != '{' {
			return nil, carryon.Errorf(carryon.EINVALID, "%s.arguments must be a JSON object (such as {} for none), not %s", ct, describe(args))
		}
		if seen[id] {
			return nil, carryon.Errorf(carryon.EINVALID, "%s.id %q is used twice in one message", ct, id)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	return ids, nil
}

// callString returns the non-empty string field of a tool call.
func callString(c map[string]json.RawMessage, field, at string) (string, error) {
	var s string
	if raw, ok := c[field]; !ok || json.Unmarshal(raw, &s) != nil || strings.TrimSpace(s) == "" {
		return "", carryon.Errorf(carryon.EINVALID, "%s.%s must be a non-empty string; a tool call is %s", at, field, toolCallShape)
	}
	return s, nil
}

// describe names the kind of a JSON value for an error message.
func describe(raw []byte) string {
	if len(raw) == 0 {
		return "missing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '[':
		return "an array"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// findCalls checks that every pending tool message (tool_call_id → index) answers a tool call
// among the session's last carryon.MaxMessageWindow messages. It reads them only when a tool
// message's call is not in the append itself.
func findCalls(ctx context.Context, tx store.Tx, sess *carryon.Session, msgs []carryon.NewMessage, pending map[string]int) error {
	if len(pending) == 0 {
		return nil
	}
	stored, err := tx.LastMessages(ctx, sess.OwnerID, sess, carryon.MaxMessageWindow)
	if err != nil {
		return err
	}
	for _, m := range stored {
		if m.Role != carryon.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		var calls []carryon.ToolCall
		if json.Unmarshal(m.ToolCalls, &calls) != nil {
			continue
		}
		for _, c := range calls {
			delete(pending, c.ID)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	first, firstID := len(msgs), ""
	for id, i := range pending {
		if i < first {
			first, firstID = i, id
		}
	}
	return carryon.Errorf(carryon.EINVALID, "messages[%d].tool_call_id %q answers no tool call: a tool message answers a tool call of an assistant message earlier in the same append or among the session's last %d messages", first, firstID, carryon.MaxMessageWindow)
}
