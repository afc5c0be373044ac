package sessions_test

import (
	"testing"

	"github.com/carryon-hub/carryon"
)

// A session created with its first messages stores both in one write: version 2, the messages
// linked to the create's request id; a repeat of the request id answers the same session and
// stores nothing more; messages an append would refuse leave no session behind; a session found
// by its external id is answered unchanged (its messages are not appended again).
func TestCreateWithMessages(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	in := carryon.NewSession{Title: "with history", ExternalID: "ticket-7", Messages: []carryon.NewMessage{
		{Role: carryon.RoleUser, Content: "hello"},
		{Role: carryon.RoleAssistant, ToolCalls: []byte(`[{"id":"c1","name":"look","arguments":{}}]`)},
		{Role: carryon.RoleTool, ToolCallID: "c1", Content: "seen"},
	}, WriteOptions: carryon.WriteOptions{RequestID: "create-1"}}
	s, err := f.svc.Create(f.alice, in)
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != 2 || s.MessageCount != 3 || s.LastSeq != 3 {
		t.Fatalf("created: version %d, %d messages, last seq %d", s.Version, s.MessageCount, s.LastSeq)
	}
	page, err := f.svc.ListMessages(f.alice, s.ID, carryon.MessageFilter{})
	if err != nil || len(page.Items) != 3 || page.Items[0].RequestID != "create-1" || page.Items[2].ToolCallID != "c1" {
		t.Fatalf("messages: %+v %v", page, err)
	}
	again, err := f.svc.Create(f.alice, in)
	if err != nil || again.ID != s.ID {
		t.Fatalf("retry: %+v %v", again, err)
	}
	in.RequestID = ""
	found, err := f.svc.Create(f.alice, in)
	if err != nil || found.ID != s.ID || found.MessageCount != 3 {
		t.Fatalf("by external id: %+v %v", found, err)
	}

	before, err := f.svc.List(f.alice, carryon.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for name, msgs := range map[string][]carryon.NewMessage{
		"a tool message without its call": {{Role: carryon.RoleTool, ToolCallID: "nowhere", Content: "x"}},
		"no role":                         {{Content: "x"}},
		"a summary past the last message": {{Role: carryon.RoleSystem, Kind: carryon.KindSummary, Content: "s", CoversFrom: 1, CoversTo: 5}},
	} {
		_, err := f.svc.Create(f.alice, carryon.NewSession{Title: name, Messages: msgs})
		wantCode(t, err, carryon.EINVALID)
	}
	after, err := f.svc.List(f.alice, carryon.SessionFilter{})
	if err != nil || len(after.Items) != len(before.Items) {
		t.Fatalf("refused creates left sessions behind: %d before, %d after (%v)", len(before.Items), len(after.Items), err)
	}
}
