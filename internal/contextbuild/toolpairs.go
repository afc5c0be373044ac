package contextbuild

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/carryon-hub/carryon"
)

// pairTools returns msgs as a model API accepts them, which refuses the whole request otherwise:
// each tool message is among the tool messages right after the assistant message whose call it
// answers, and every tool call of an assistant message is answered there. Sessions written before
// appends were checked can hold tool messages that answer nothing and calls nobody answered; they
// are left out of what is sent (an assistant message keeps its text and its answered calls) and
// each kind left out is described in a note. Stored history is not changed.
func pairTools(msgs []*carryon.Message) ([]*carryon.Message, []string) {
	var out []*carryon.Message
	var orphans, unanswered, malformed []string
	for i := 0; i < len(msgs); {
		m := msgs[i]
		switch {
		case m.Role == carryon.RoleTool:
			orphans = append(orphans, describeTool(m))
			i++
			continue
		case m.Role != carryon.RoleAssistant || len(m.ToolCalls) == 0:
			out = append(out, m)
			i++
			continue
		}
		var calls []carryon.ToolCall
		broken := json.Unmarshal(m.ToolCalls, &calls) != nil
		if broken {
			malformed = append(malformed, fmt.Sprintf("seq %d: tool_calls is not a list of calls", m.Seq))
			calls = nil
		}
		valid := map[string]bool{}
		for _, c := range calls {
			if c.ID == "" || c.Name == "" || valid[c.ID] {
				malformed = append(malformed, fmt.Sprintf("seq %d: a call without an id or a name, or with an id used twice", m.Seq))
				continue
			}
			valid[c.ID] = true
		}
		j := i + 1
		answered := map[string]bool{}
		var results []*carryon.Message
		for ; j < len(msgs) && msgs[j].Role == carryon.RoleTool; j++ {
			t := msgs[j]
			if valid[t.ToolCallID] && !answered[t.ToolCallID] {
				answered[t.ToolCallID] = true
				results = append(results, t)
			} else {
				orphans = append(orphans, describeTool(t))
			}
		}
		var kept []carryon.ToolCall
		for _, c := range calls {
			if valid[c.ID] && answered[c.ID] {
				kept = append(kept, c)
				valid[c.ID] = false // a second call with the same id stays out
			} else if valid[c.ID] {
				unanswered = append(unanswered, fmt.Sprintf("seq %d: %s %s", m.Seq, c.Name, c.ID))
			}
		}
		switch {
		case len(kept) == len(calls) && !broken:
			out = append(out, m)
		case len(kept) > 0 || m.Content != "":
			cp := *m
			cp.ToolCalls = nil
			if len(kept) > 0 {
				cp.ToolCalls, _ = json.Marshal(kept)
			}
			out = append(out, &cp)
		}
		out = append(out, results...)
		i = j
	}
	var notes []string
	if len(orphans) > 0 {
		notes = append(notes, fmt.Sprintf("left out %d tool message(s) that answer no tool call right before them (%s)", len(orphans), list(orphans)))
	}
	if len(unanswered) > 0 {
		notes = append(notes, fmt.Sprintf("left out %d tool call(s) that no tool message answers (%s)", len(unanswered), list(unanswered)))
	}
	if len(malformed) > 0 {
		notes = append(notes, fmt.Sprintf("left out %d malformed tool call(s) (%s)", len(malformed), list(malformed)))
	}
	return out, notes
}

func describeTool(m *carryon.Message) string {
	if m.ToolCallID == "" {
		return fmt.Sprintf("seq %d without a tool_call_id", m.Seq)
	}
	return fmt.Sprintf("seq %d for %s", m.Seq, m.ToolCallID)
}

// list joins the first few items of a note.
func list(items []string) string {
	const most = 5
	if len(items) > most {
		return strings.Join(items[:most], "; ") + fmt.Sprintf("; and %d more", len(items)-most)
	}
	return strings.Join(items, "; ")
}
