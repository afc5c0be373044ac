package carryonadk

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/adk/v2/session"

	"github.com/carryon-hub/carryon"
)

// metaKey is the key of a message's metadata that holds the ADK event.
const metaKey = "adk_event"

// messageOf is the carryon message of an event: the user's or the assistant's by the author,
// the event's text as content (empty when it has none), the whole event in the metadata.
func messageOf(ev *session.Event) (carryon.NewMessage, error) {
	raw, err := json.Marshal(ev)
	if err != nil {
		return carryon.NewMessage{}, fmt.Errorf("carryonadk: encode event %s: %w", ev.ID, err)
	}
	meta, err := json.Marshal(map[string]json.RawMessage{metaKey: raw})
	if err != nil {
		return carryon.NewMessage{}, err
	}
	role := carryon.RoleAssistant
	if ev.Author == "user" {
		role = carryon.RoleUser
	}
	return carryon.NewMessage{Role: role, Content: textOf(ev), Metadata: meta}, nil
}

// textOf joins the text parts of the event's content.
func textOf(ev *session.Event) string {
	if ev.Content == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range ev.Content.Parts {
		if p != nil && p.Text != "" && !p.Thought {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// eventOf is the event a message holds, or nil when it holds none.
func eventOf(m *carryon.Message) (*session.Event, error) {
	if len(m.Metadata) == 0 {
		return nil, nil
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(m.Metadata, &meta); err != nil {
		return nil, nil
	}
	raw, ok := meta[metaKey]
	if !ok {
		return nil, nil
	}
	var ev session.Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, fmt.Errorf("carryonadk: message %d holds an event that does not decode: %w", m.Seq, err)
	}
	return &ev, nil
}
