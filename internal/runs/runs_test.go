package runs_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/carryon-hub/carryon"
)

// TestSeedLoop: a first chat without a session creates one and sets goal and next action; a
// second chat that only says "continue the task" is answered from them.
func TestSeedLoop(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	first, err := f.runs.Chat(f.alice, carryon.ChatInput{Message: "Write the release notes: collect the merged changes, then group them by area, then draft the notes"})
	if err != nil {
		t.Fatal(err)
	}
	if first.Status != carryon.RunSucceeded || first.SessionID == "" {
		t.Fatalf("first chat: %+v", first)
	}
	goal, next := first.WorkingMemory.Goal(), first.WorkingMemory.NextAction()
	if goal == "" || next != "Collect the merged changes" {
		t.Fatalf("working memory after the first chat: %v", first.WorkingMemory)
	}
	second, err := f.runs.Chat(f.alice, carryon.ChatInput{SessionID: first.SessionID, Message: "continue the task"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(second.Reply, "Goal: "+goal) || !strings.Contains(second.Reply, "Next action: Group them by area") {
		t.Fatalf("second reply %q does not carry the goal and the next action", second.Reply)
	}
	acts, err := f.runs.Actions(f.alice, second.RunID)
	if err != nil || len(acts) != 2 || acts[0].Tool != "write_file" || acts[0].Status != carryon.ActionSucceeded || acts[0].FingerprintAfter == "" {
		t.Fatalf("journal: %v %+v", err, acts)
	}
	// Everything the runs wrote is linked to them.
	page, _ := f.sess.ListMessages(f.alice, first.SessionID, carryon.MessageFilter{})
	for _, m := range page.Items {
		if m.RunID != first.RunID && m.RunID != second.RunID {
			t.Fatalf("message %d has run id %q", m.Seq, m.RunID)
		}
	}
	// Bob sees none of it.
	_, err = f.runs.GetRun(f.bob, second.RunID)
	wantCode(t, err, carryon.ENOTFOUND)
	_, err = f.runs.Chat(f.bob, carryon.ChatInput{SessionID: first.SessionID, Message: "continue"})
	wantCode(t, err, carryon.ENOTFOUND)
}

// TestRetriedRunRequest: the same request id, before and during the run, returns the same run;
// one user message is stored and one run executed.
func TestRetriedRunRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	s, _ := f.sess.Create(f.alice, carryon.NewSession{})
	in := carryon.NewRun{Message: "Plan the migration", WriteOptions: carryon.WriteOptions{RequestID: "r-1"}}
	var ids sync.Map
	var wg sync.WaitGroup
	var errs atomic.Int32
	for range 20 {
		wg.Go(func() {
			run, err := f.runs.Start(f.alice, s.ID, in)
			if err != nil {
				errs.Add(1)
				return
			}
			ids.Store(run.ID, true)
		})
	}
	wg.Wait()
	n := 0
	var id string
	ids.Range(func(k, _ any) bool { n++; id = k.(string); return true })
	if n != 1 || errs.Load() != 0 {
		t.Fatalf("%d distinct runs, %d errors", n, errs.Load())
	}
	f.wait(t, f.alice, id)
	again, err := f.runs.Start(f.alice, s.ID, in)
	if err != nil || again.ID != id {
		t.Fatalf("retry after the run: %v %v", err, again)
	}
	page, _ := f.runs.ListRuns(f.alice, s.ID, carryon.RunFilter{})
	msgs, _ := f.sess.ListMessages(f.alice, s.ID, carryon.MessageFilter{})
	users := 0
	for _, m := range msgs.Items {
		if m.Role == carryon.RoleUser {
			users++
		}
	}
	if len(page.Items) != 1 || users != 1 {
		t.Fatalf("%d runs and %d user messages, want 1 and 1", len(page.Items), users)
	}
	in.Message = "another message"
	_, err = f.runs.Start(f.alice, s.ID, in)
	wantCode(t, err, carryon.EKEYREUSED)
}

func TestBadRunInput(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	s, _ := f.sess.Create(f.alice, carryon.NewSession{})
	for _, in := range []carryon.NewRun{{}, {Message: "\xff"}, {Message: "x", Multitask: "sometimes"}} {
		_, err := f.runs.Start(f.alice, s.ID, in)
		wantCode(t, err, carryon.EINVALID)
	}
	_, err := f.runs.Start(f.alice, "sess_nope", carryon.NewRun{Message: "x"})
	wantCode(t, err, carryon.ENOTFOUND)
	_, err = f.runs.Start(context.Background(), s.ID, carryon.NewRun{Message: "x"})
	wantCode(t, err, carryon.EUNAUTHORIZED)
}
