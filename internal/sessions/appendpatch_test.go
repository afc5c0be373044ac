package sessions_test

import (
	"encoding/json"
	"testing"

	"github.com/carryon-hub/carryon"
)

// TestAppendWithWorkingMemoryPatch: messages and a working-memory patch in one write take one
// version and one request id; a repeat replays; a write that fails in any part stores neither.
func TestAppendWithWorkingMemoryPatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.create(t, f.alice)
	in := carryon.AppendInput{
		Messages:           []carryon.NewMessage{{Role: carryon.RoleAssistant, Content: "Noted: the park is Hyde Park."}},
		WorkingMemoryPatch: json.RawMessage(`{"goal":"plan a picnic","next_action":"buy food"}`),
		WriteOptions:       carryon.WriteOptions{RequestID: "req_event_1", ExpectedVersion: carryon.Ptr(s.Version)},
	}
	res, err := f.svc.AppendMessages(f.alice, s.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != s.Version+1 || res.Messages[0].Version != res.Version || res.WorkingMemory == nil ||
		res.WorkingMemory.Version != res.Version || res.WorkingMemory.WorkingMemory.Goal() != "plan a picnic" || res.WorkingMemory.WorkingMemoryVersion != 1 {
		t.Fatalf("append = %+v (memory %+v); want one version for both", res, res.WorkingMemory)
	}
	hist, err := f.svc.WorkingMemoryHistory(f.alice, s.ID, carryon.RevisionFilter{})
	if err != nil || len(hist.Items) != 1 || hist.Items[0].Version != res.Version {
		t.Fatalf("history = %+v, %v; want one revision at version %d", hist, err, res.Version)
	}
	again, err := f.svc.AppendMessages(f.alice, s.ID, in)
	if err != nil || again.Version != res.Version || again.Messages[0].Seq != res.Messages[0].Seq {
		t.Fatalf("the repeat = %+v, %v; want the first answer", again, err)
	}

	// A failure after the patch (a summary past the last message) and a failure of the patch (a
	// document over the limit) each leave everything as it was.
	big := make([]byte, 300<<10)
	for i := range big {
		big[i] = 'x'
	}
	for name, bad := range map[string]carryon.AppendInput{
		"the messages fail": {
			Messages:           []carryon.NewMessage{{Role: carryon.RoleSystem, Kind: carryon.KindSummary, Content: "s", CoversFrom: 1, CoversTo: 99}},
			WorkingMemoryPatch: json.RawMessage(`{"goal":"changed"}`),
		},
		"the patch fails": {
			Messages:           []carryon.NewMessage{{Role: carryon.RoleUser, Content: "hello"}},
			WorkingMemoryPatch: json.RawMessage(`{"notes":"` + string(big) + `"}`),
		},
		"the patch is not an object": {
			Messages:           []carryon.NewMessage{{Role: carryon.RoleUser, Content: "hello"}},
			WorkingMemoryPatch: json.RawMessage(`[1]`),
		},
	} {
		if _, err := f.svc.AppendMessages(f.alice, s.ID, bad); carryon.ErrorCode(err) != carryon.EINVALID {
			t.Fatalf("%s: %v, want invalid", name, err)
		}
		v, err := f.svc.Get(f.alice, s.ID, carryon.GetOptions{Messages: 10})
		if err != nil || v.Version != res.Version || len(v.Messages) != 1 || v.WorkingMemory.Goal() != "plan a picnic" {
			t.Fatalf("%s: the session moved: version %d, %d messages, goal %q", name, v.Version, len(v.Messages), v.WorkingMemory.Goal())
		}
	}
	// null is no patch.
	if res, err := f.svc.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "hi"}}, WorkingMemoryPatch: json.RawMessage(`null`)}); err != nil || res.WorkingMemory != nil {
		t.Fatalf("append with a null patch = %+v, %v", res, err)
	}
}

// TestMessagesWithoutContent: a message that carries only tool calls or metadata, and a tool
// result, may have empty content; any other message may not.
func TestMessagesWithoutContent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.create(t, f.alice)
	ok := []carryon.NewMessage{
		{Role: carryon.RoleUser, Metadata: json.RawMessage(`{"adk_event":{"id":"e1"}}`)},
		{Role: carryon.RoleAssistant, ToolCalls: json.RawMessage(`[{"id":"c1","name":"lookup","arguments":{}}]`)},
		{Role: carryon.RoleTool, ToolCallID: "c1"},
	}
	if _, err := f.svc.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: ok}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []carryon.NewMessage{{Role: carryon.RoleUser}, {Role: carryon.RoleAssistant}} {
		if _, err := f.svc.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{bad}}); carryon.ErrorCode(err) != carryon.EINVALID {
			t.Errorf("append %+v = %v, want invalid", bad, err)
		}
	}
}
