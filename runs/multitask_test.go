package runs_test

import (
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/model/scripted"
)

func TestMultitask(t *testing.T) {
	f := newFixture(t, scripted.New(150*time.Millisecond))
	s, _ := f.sess.Create(f.alice, carryon.NewSession{})
	first, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: "Tidy the docs: fix links, then update the index"})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("reject", func(t *testing.T) {
		_, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: "continue"})
		wantCode(t, err, carryon.EBUSY)
		if e, _ := carryon.AsError(err); e.ActiveRunID != first.ID {
			t.Fatalf("active run id = %q, want %q", e.ActiveRunID, first.ID)
		}
	})

	t.Run("enqueue", func(t *testing.T) {
		second, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: "continue the task", Multitask: carryon.MultitaskEnqueue})
		if err != nil || second.Status != carryon.RunQueued || second.TriggerSeq != 0 {
			t.Fatalf("enqueue: %v %+v", err, second)
		}
		a, b := f.wait(t, f.alice, first.ID), f.wait(t, f.alice, second.ID)
		if a.Status != carryon.RunSucceeded || b.Status != carryon.RunSucceeded {
			t.Fatalf("statuses %s (%s) and %s (%s)", a.Status, a.Error, b.Status, b.Error)
		}
		if b.StartedAt.Before(*a.FinishedAt) {
			t.Fatalf("the queued run started at %v, before the first ended at %v", b.StartedAt, a.FinishedAt)
		}
		// The second run's message follows everything the first run wrote.
		msgs, _ := f.sess.ListMessages(f.alice, s.ID, carryon.MessageFilter{})
		for _, m := range msgs.Items {
			if m.RunID == first.ID && m.Seq > b.TriggerSeq {
				t.Fatalf("message %d of the first run comes after the second run's message %d", m.Seq, b.TriggerSeq)
			}
		}
		if b.Reply == "" || !strings.Contains(b.Reply, "Next action: Update the index") {
			t.Fatalf("second reply: %q", b.Reply)
		}
	})

	t.Run("interrupt", func(t *testing.T) {
		long, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: "continue"})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		next, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: "New task: write a changelog", Multitask: carryon.MultitaskInterrupt})
		if err != nil {
			t.Fatal(err)
		}
		a, b := f.wait(t, f.alice, long.ID), f.wait(t, f.alice, next.ID)
		if a.Status != carryon.RunInterrupted || b.Status != carryon.RunSucceeded {
			t.Fatalf("statuses %s (%s) and %s (%s)", a.Status, a.Error, b.Status, b.Error)
		}
		// It stopped at a checkpoint: every tool call it made has its result.
		acts, _ := f.runs.Actions(f.alice, a.ID)
		for _, act := range acts {
			if act.Status != carryon.ActionSucceeded {
				t.Fatalf("interrupted run left action %s %s", act.Tool, act.Status)
			}
		}
	})

	t.Run("cancel", func(t *testing.T) {
		run, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: "continue"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.runs.Cancel(f.alice, run.ID, carryon.RetryOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := f.wait(t, f.alice, run.ID); got.Status != carryon.RunCancelled {
			t.Fatalf("status %s", got.Status)
		}
		_, err = f.runs.Cancel(f.bob, run.ID, carryon.RetryOptions{})
		wantCode(t, err, carryon.ENOTFOUND)
	})
}
