package runs_test

import (
	"context"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/scripted"
)

// held is the scripted model, except that the first call answering tool results after hold holds
// until released or until its context ends: a run paused in its model call after its tools ran.
type held struct {
	scripted.Provider
	mu      sync.Mutex
	armed   chan struct{} // the gate of the next call to hold (nil: none)
	entered chan struct{} // receives once per held call
}

func newHeld() *held { return &held{entered: make(chan struct{}, 10)} }

// hold makes the next call that answers tool results wait; release lets it go on.
func (h *held) hold() (release func()) {
	gate := make(chan struct{})
	h.mu.Lock()
	h.armed = gate
	h.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(gate) }) }
}

func (h *held) take() chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	gate := h.armed
	h.armed = nil
	return gate
}

func (h *held) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == model.RoleTool {
			if gate := h.take(); gate != nil {
				h.entered <- struct{}{}
				select {
				case <-gate:
				case <-ctx.Done():
				}
				if ctx.Err() != nil {
					yield(model.Chunk{}, ctx.Err())
					return
				}
			}
		}
		for c, err := range h.Provider.Stream(ctx, req) {
			if !yield(c, err) || err != nil {
				return
			}
		}
	}
}

// waitEntered waits until a run is held in its model call.
func (h *held) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-h.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("no run reached its held model call")
	}
}

const tidy = "Tidy the docs: fix links, then update the index"

// Each policy on its own session: the first run is held in its model call (after its tools ran)
// for as long as the policy needs it active.
func TestMultitask(t *testing.T) {
	t.Parallel()
	t.Run("reject", func(t *testing.T) {
		t.Parallel()
		m := newHeld()
		f := newFixture(t, m)
		s, _ := f.sess.Create(f.alice, carryon.NewSession{})
		m.hold()
		first, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: tidy})
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: "continue"})
		wantCode(t, err, carryon.EBUSY)
		if e, _ := carryon.AsError(err); e.ActiveRunID != first.ID {
			t.Fatalf("active run id = %q, want %q", e.ActiveRunID, first.ID)
		}
	})

	t.Run("enqueue", func(t *testing.T) {
		t.Parallel()
		m := newHeld()
		f := newFixture(t, m)
		s, _ := f.sess.Create(f.alice, carryon.NewSession{})
		release := m.hold()
		first, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: tidy})
		if err != nil {
			t.Fatal(err)
		}
		second, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: "continue the task", Multitask: carryon.MultitaskEnqueue})
		if err != nil || second.Status != carryon.RunQueued || second.TriggerSeq != 0 {
			t.Fatalf("enqueue: %v %+v", err, second)
		}
		release()
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
		t.Parallel()
		m := newHeld()
		f := newFixture(t, m)
		s := f.sessionWithTask(t, tidy)
		m.hold()
		long, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: "continue"})
		if err != nil {
			t.Fatal(err)
		}
		m.waitEntered(t)
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
		t.Parallel()
		m := newHeld()
		f := newFixture(t, m)
		s := f.sessionWithTask(t, tidy)
		m.hold()
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

// sessionWithTask is a new session of alice's whose first run set the task's goal and plan.
func (f *fixture) sessionWithTask(t *testing.T, task string) *carryon.Session {
	t.Helper()
	s, err := f.sess.Create(f.alice, carryon.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	run, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: task})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.wait(t, f.alice, run.ID); got.Status != carryon.RunSucceeded {
		t.Fatalf("the task's run: %s (%s)", got.Status, got.Error)
	}
	return s
}
