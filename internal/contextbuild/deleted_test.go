package contextbuild_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
)

// A deleted message is not sent; deleting one half of a tool call pair leaves the other half
// out too, so the model still gets a conversation it accepts.
func TestBuildSkipsDeletedMessages(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.session(t)
	f.add(t, id,
		carryon.NewMessage{Role: carryon.RoleUser, Content: "my password is hunter2"}, // seq 1, deleted
		carryon.NewMessage{Role: carryon.RoleUser, Content: "look it up"},
		carryon.NewMessage{Role: carryon.RoleAssistant, ToolCalls: json.RawMessage(`[{"id":"c1","name":"t","arguments":{}}]`)}, // seq 3, deleted
		carryon.NewMessage{Role: carryon.RoleTool, ToolCallID: "c1", Content: "found"},
		carryon.NewMessage{Role: carryon.RoleAssistant, ToolCalls: json.RawMessage(`[{"id":"c2","name":"t","arguments":{}}]`)},
		carryon.NewMessage{Role: carryon.RoleTool, ToolCallID: "c2", Content: "second"}, // seq 6, deleted
		carryon.NewMessage{Role: carryon.RoleAssistant, Content: "done"},
	)
	for _, seq := range []int64{1, 3, 6} {
		if _, err := f.svc.DeleteMessage(f.alice, id, seq, carryon.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := contextbuild.New(contextbuild.Config{}, f.svc, nil).Build(f.alice, id, contextbuild.Options{Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range c.Messages {
		got = append(got, m.Role+":"+m.Content)
		if strings.Contains(m.Content, "hunter2") {
			t.Fatalf("a deleted message was sent: %q", m.Content)
		}
	}
	want := []string{"user:look it up", "assistant:done"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("messages sent %q, want %q", got, want)
	}
	if notes := strings.Join(c.Notes, "\n"); !strings.Contains(notes, "seq 4 for c1") || !strings.Contains(notes, "seq 5: t c2") {
		t.Fatalf("notes %q", c.Notes)
	}
}
