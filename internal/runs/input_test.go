package runs_test

import (
	"encoding/json"
	"testing"

	"github.com/carryon-hub/carryon"
)

// TestStartWithInput: a run's input messages are stored right before its user message, in the
// start's transaction; its metadata is in its run.queued event; input needs multitask reject,
// and a refused start stores nothing.
func TestStartWithInput(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	s, err := f.sess.Create(f.alice, carryon.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	in := []carryon.NewMessage{{Role: carryon.RoleUser, Content: "Remember: blue."}, {Role: carryon.RoleAssistant, Content: "Noted."}}
	_, err = f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: "x", Input: in, Multitask: carryon.MultitaskEnqueue})
	wantCode(t, err, carryon.EINVALID)
	_, err = f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: "x", Input: []carryon.NewMessage{{Role: "robot", Content: "?"}}})
	wantCode(t, err, carryon.EINVALID)
	_, err = f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: "x", Metadata: json.RawMessage(`{"a":`)})
	wantCode(t, err, carryon.EINVALID)
	run, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: "What colour?", Input: in, Metadata: json.RawMessage(`{"client":"compat"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if run.TriggerSeq != 3 {
		t.Fatalf("trigger_seq = %d, want 3 (after the two input messages)", run.TriggerSeq)
	}
	page, err := f.sess.ListMessages(f.alice, s.ID, carryon.MessageFilter{Limit: 3})
	if err != nil || len(page.Items) != 3 {
		t.Fatalf("messages = %v, %v", page, err)
	}
	for i, want := range []string{"Remember: blue.", "Noted.", "What colour?"} {
		if m := page.Items[i]; m.Content != want || m.RunID != run.ID {
			t.Fatalf("message %d = %q of run %q, want %q of %s", i+1, m.Content, m.RunID, want, run.ID)
		}
	}
	events, err := f.runs.Events(f.alice, run.ID, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	first, ok, err := events.Next()
	if err != nil || !ok || first.Type != carryon.EventRunQueued {
		t.Fatalf("first event = %v, %v, %v", first, ok, err)
	}
	var data struct {
		Metadata map[string]string `json:"metadata"`
	}
	if json.Unmarshal(first.Data, &data) != nil || data.Metadata["client"] != "compat" {
		t.Fatalf("run.queued = %s", first.Data)
	}
}

// TestStartAfterToolOutput: a run without a message whose input ends with a tool message stores
// the input only (no user message of its own), its trigger the input's last message, and the
// model continues after the tool's output. Without such an input a message is required.
func TestStartAfterToolOutput(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	s, err := f.sess.Create(f.alice, carryon.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	call := json.RawMessage(`[{"id":"call_1","name":"lookup","arguments":{}}]`)
	in := []carryon.NewMessage{
		{Role: carryon.RoleUser, Content: "Look it up."},
		{Role: carryon.RoleAssistant, ToolCalls: call},
		{Role: carryon.RoleTool, ToolCallID: "call_1", Content: "42"},
	}
	for _, bad := range [][]carryon.NewMessage{nil, in[:1], in[:2]} {
		_, err = f.runs.Start(f.alice, s.ID, carryon.NewRun{Input: bad})
		wantCode(t, err, carryon.EINVALID)
	}
	run, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Input: in})
	if err != nil {
		t.Fatal(err)
	}
	if run.TriggerSeq != 3 || run.Message != "" {
		t.Fatalf("trigger_seq = %d, message %q; want 3 (the tool message) and none", run.TriggerSeq, run.Message)
	}
	done := f.wait(t, f.alice, run.ID)
	if done.Status != carryon.RunSucceeded || done.Reply == "" {
		t.Fatalf("run = %s (%q, %s)", done.Status, done.Reply, done.Error)
	}
	page, err := f.sess.ListMessages(f.alice, s.ID, carryon.MessageFilter{Limit: 10})
	if err != nil || len(page.Items) != 4 || page.Items[3].Role != carryon.RoleAssistant || page.Items[3].Content != done.Reply {
		t.Fatalf("messages = %+v, %v", page, err)
	}
}
