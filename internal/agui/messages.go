package agui

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/carryon-hub/carryon"
)

// Message ids. AG-UI clients send the whole thread with every input; carryon tells the messages
// it has from new ones by id alone, never by content:
//
//   - a stored message's AG-UI id is "<session id>:<seq>" (MESSAGES_SNAPSHOT, which ends every
//     stream, gives the client these ids for the whole thread);
//   - a message streamed before it was stored is "<run id>:<step>" (TEXT_MESSAGE_START), the
//     snapshot then renames it;
//   - an input message whose id has either form (its session id this thread's, or a run id) is
//     carryon's and never appended again; any other id is a new message of the client's.
//
// The rule needs no lookup and is the same on a repeat, so a repeated input appends the same
// messages, which the run start's request id answers without storing them twice.

// storedID is the AG-UI id of a stored message.
func storedID(sessionID string, seq int64) string {
	return sessionID + ":" + strconv.FormatInt(seq, 10)
}

// streamedID is the AG-UI id of the text a run's step streams; k > 0 names the k-th restart of
// that text after a model call said something else.
func streamedID(runID string, step, k int) string {
	id := runID + ":" + strconv.Itoa(step)
	if k > 0 {
		id += "." + strconv.Itoa(k)
	}
	return id
}

// known reports whether an input message id is one carryon gave (the thread's session's).
func known(sessionID, id string) bool {
	head, tail, ok := strings.Cut(id, ":")
	if !ok || tail == "" {
		return false
	}
	return head == sessionID || strings.HasPrefix(head, "run_")
}

// newMessage converts an input message to the message carryon appends; skip is true for the
// client's own kinds (activity, reasoning), which are not history. checkMessage passed.
func newMessage(m message) (nm carryon.NewMessage, skip bool) {
	text := func() string { s, _ := textOf(m.Content, ""); return s }
	switch m.Role {
	case "user":
		return carryon.NewMessage{Role: carryon.RoleUser, Content: text(), Name: m.Name}, false
	case "system", "developer":
		return carryon.NewMessage{Role: carryon.RoleSystem, Content: text(), Name: m.Name}, false
	case "assistant":
		nm = carryon.NewMessage{Role: carryon.RoleAssistant, Name: m.Name}
		if len(m.Content) > 0 && !isNull(m.Content) {
			nm.Content = text()
		}
		if len(m.ToolCalls) > 0 {
			calls := make([]carryon.ToolCall, 0, len(m.ToolCalls))
			for _, c := range m.ToolCalls {
				args := json.RawMessage(strings.TrimSpace(c.Function.Arguments))
				if len(args) == 0 {
					args = json.RawMessage("{}")
				}
				calls = append(calls, carryon.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: args})
			}
			nm.ToolCalls, _ = json.Marshal(calls)
		}
		return nm, false
	case "tool":
		content := text()
		if content == "" && m.Error != "" {
			content = m.Error
		}
		return carryon.NewMessage{Role: carryon.RoleTool, Content: content, ToolCallID: m.ToolCallID}, false
	}
	return carryon.NewMessage{}, true
}

// aguiMessage is a stored message as an AG-UI message (MESSAGES_SNAPSHOT); ok is false for
// what AG-UI has no message for (summaries, which stand for older messages in carryon's context
// only).
func aguiMessage(m *carryon.Message) (map[string]any, bool) {
	if m.Kind == carryon.KindSummary || m.Deleted {
		return nil, false
	}
	out := map[string]any{"id": storedID(m.SessionID, m.Seq), "role": string(m.Role)}
	if m.Name != "" && m.Role != carryon.RoleTool {
		out["name"] = m.Name
	}
	switch m.Role {
	case carryon.RoleUser, carryon.RoleSystem:
		out["content"] = m.Content
	case carryon.RoleAssistant:
		if m.Content != "" {
			out["content"] = m.Content
		}
		if calls := toolCallsOf(m); len(calls) > 0 {
			tcs := make([]map[string]any, 0, len(calls))
			for _, c := range calls {
				tcs = append(tcs, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": argsText(c.Arguments)}})
			}
			out["toolCalls"] = tcs
		}
	case carryon.RoleTool:
		out["content"] = m.Content
		out["toolCallId"] = m.ToolCallID
	default:
		return nil, false
	}
	return out, true
}

// toolCallsOf are the calls of a stored assistant message.
func toolCallsOf(m *carryon.Message) []carryon.ToolCall {
	var calls []carryon.ToolCall
	if len(m.ToolCalls) > 0 {
		_ = json.Unmarshal(m.ToolCalls, &calls)
	}
	return calls
}

// argsText is a call's JSON arguments as the string AG-UI carries them in.
func argsText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s // arguments stored as a JSON string already
	}
	return string(raw)
}
