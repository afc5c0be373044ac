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
