package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/client"
)

const task = "Write a tea guide: research water temperature, then draft the steps, then proofread"

// drain reads a stream to its end and fails the test on an error.
func drain(t *testing.T, st carryon.EventStream) []*carryon.Event {
	t.Helper()
	defer st.Close()
	var out []*carryon.Event
	for {
		e, ok, err := st.Next()
		if err != nil {
			t.Fatalf("after %d events: %v", len(out), err)
		}
		if !ok {
			return out
		}
		out = append(out, e)
	}
}

// wantComplete checks that events are a whole run's stream: seqs after..n with no gap or repeat,
// ending with the run's last event.
// A model delta may come as a preview (seq 0) in place of its stored copy.
func wantComplete(t *testing.T, events []*carryon.Event, after int64) {
	t.Helper()
	if len(events) == 0 {
		t.Fatal("no events")
	}
	want := after + 1
	for i, e := range events {
		switch {
		case e.Seq == 0 && e.Type == carryon.EventModelDelta:
			want++ // a preview in place of its stored copy, which the stream skips
		case e.Seq != want:
			t.Fatalf("event %d has seq %d, want %d (%s)", i, e.Seq, want, seqs(events))
		default:
			want++
		}
	}
	if last := events[len(events)-1].Type; last != carryon.EventRunFinished && last != carryon.EventRunFailed {
		t.Fatalf("the stream ended with %s, not the run's last event", last)
	}
}

func seqs(events []*carryon.Event) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString(" ")
		b.WriteString(string(e.Type))
	}
	return b.String()
}

// The client speaks every run call of the core contract against the real server.
func TestClientRunRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	c := e.client(e.aliceKey)
	cx := ctx(t)
	s, err := c.Create(cx, carryon.NewSession{Title: "tea"})
	if err != nil {
		t.Fatal(err)
	}
	var rec1, rec2 carryon.WriteReceipt
	in := carryon.NewRun{Message: task, WriteOptions: carryon.WriteOptions{RequestID: "run-1"}}
	run, err := c.Start(carryon.NewContextWithReceipt(cx, &rec1), s.ID, in)
	if err != nil || rec1.Replayed || run.SessionID != s.ID || !strings.HasPrefix(run.ID, "run_") || run.Message != task {
		t.Fatalf("start: %+v %v (replayed %v)", run, err, rec1.Replayed)
	}
	again, err := c.Start(carryon.NewContextWithReceipt(cx, &rec2), s.ID, in)
	if err != nil || !rec2.Replayed || again.ID != run.ID {
		t.Fatalf("repeat: %+v %v (replayed %v)", again, err, rec2.Replayed)
	}
	st, err := c.Events(cx, run.ID, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	events := drain(t, st)
	wantComplete(t, events, 0)
	if events[0].Type != carryon.EventRunQueued || events[0].RunID != run.ID {
		t.Fatalf("first event: %+v", events[0])
	}
	types := seqs(events)
	for _, want := range []carryon.EventType{carryon.EventRunStarted, carryon.EventToolStarted, carryon.EventToolFinished, carryon.EventWorkingMemoryUpdated, carryon.EventModelDelta} {
		if !strings.Contains(types, string(want)) {
			t.Errorf("no %s among%s", want, types)
		}
	}
	got, err := c.GetRun(cx, run.ID)
	if err != nil || got.Status != carryon.RunSucceeded || !strings.Contains(got.Reply, "Goal:") {
		t.Fatalf("get run: %+v %v", got, err)
	}
	// Without follow a finished run's stream is the same and ends.
	if st, err = c.Events(cx, run.ID, 2, false); err != nil {
		t.Fatal(err)
	}
	wantComplete(t, drain(t, st), 2)

	page, err := c.ListRuns(cx, s.ID, carryon.RunFilter{Limit: 10})
	if err != nil || len(page.Items) != 1 || page.Items[0].ID != run.ID {
		t.Fatalf("list runs: %+v %v", page, err)
	}
	acts, err := c.Actions(cx, run.ID)
	if err != nil || len(acts) < 2 {
		t.Fatalf("actions: %v %v", acts, err)
	}
	for _, a := range acts {
		if a.RunID != run.ID || a.Status != carryon.ActionSucceeded || a.FingerprintAfter == "" {
			t.Errorf("action %+v", a)
		}
	}
	if cancelled, err := c.Cancel(cx, run.ID, carryon.RetryOptions{}); err != nil || cancelled.Status != carryon.RunSucceeded {
		t.Fatalf("cancel a finished run: %+v %v", cancelled, err)
	}
	raw, err := c.Context(cx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var view struct {
		SessionID string `json:"session_id"`
		Parts     []struct {
			Name    string `json:"name"`
			Tokens  int    `json:"tokens"`
			Content string `json:"content"`
		} `json:"parts"`
	}
	if err := json.Unmarshal(raw, &view); err != nil || view.SessionID != s.ID {
		t.Fatalf("context %s: %v", raw, err)
	}
	found := false
	for _, p := range view.Parts {
		if p.Name == "working_memory" {
			found = p.Tokens > 0 && strings.Contains(p.Content, "Write a tea guide")
		}
	}
	if !found {
		t.Fatalf("the context has no working memory with the goal: %s", raw)
	}

	// The seed's short path: a new session, then "continue the task" on it.
	first, err := c.Chat(cx, carryon.ChatInput{Message: task, RequestID: "chat-1"})
	if err != nil || first.SessionID == "" || first.SessionID == s.ID || first.Status != carryon.RunSucceeded {
		t.Fatalf("chat: %+v %v", first, err)
	}
	goal, next := first.WorkingMemory.Goal(), first.WorkingMemory.NextAction()
	if goal == "" || next == "" || !strings.Contains(first.Reply, next) {
		t.Fatalf("chat memory: %+v", first)
	}
	second, err := c.Chat(cx, carryon.ChatInput{SessionID: first.SessionID, Message: "continue the task"})
	if err != nil || !strings.Contains(second.Reply, goal) || !strings.Contains(second.Reply, second.WorkingMemory.NextAction()) || second.WorkingMemory.NextAction() == next {
		t.Fatalf("continue: %+v %v", second, err)
	}

	// Errors come back with their codes, at the call that made them.
	_, err = c.GetRun(cx, "run_nope")
	wantCode(t, err, carryon.ENOTFOUND)
	_, err = c.Events(cx, "run_nope", 0, true)
	wantCode(t, err, carryon.ENOTFOUND)
	_, _, err = c.StartStream(cx, "sess_nope", carryon.NewRun{Message: "hi"})
	wantCode(t, err, carryon.ENOTFOUND)
	_, err = c.Start(cx, s.ID, carryon.NewRun{Message: "other", WriteOptions: carryon.WriteOptions{RequestID: "run-1"}})
	wantCode(t, err, carryon.EKEYREUSED)
	bob := e.client(e.bobKey)
	_, err = bob.GetRun(cx, run.ID)
	wantCode(t, err, carryon.ENOTFOUND)
	_, err = bob.Events(cx, run.ID, 0, true)
	wantCode(t, err, carryon.ENOTFOUND)
	_, err = bob.Actions(cx, run.ID)
	wantCode(t, err, carryon.ENOTFOUND)
	_, err = bob.Cancel(cx, run.ID, carryon.RetryOptions{})
	wantCode(t, err, carryon.ENOTFOUND)
	_, err = bob.Context(cx, s.ID)
	wantCode(t, err, carryon.ENOTFOUND)
}

// StartStream starts a run and yields its events from the first, in the same request.
func TestClientStartStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	c := e.client(e.aliceKey)
	cx := ctx(t)
	s, err := c.Create(cx, carryon.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	var rec carryon.WriteReceipt
	id, st, err := c.StartStream(carryon.NewContextWithReceipt(cx, &rec), s.ID, carryon.NewRun{Message: task, WriteOptions: carryon.WriteOptions{RequestID: "s-1"}})
	if err != nil || !strings.HasPrefix(id, "run_") || rec.Replayed {
		t.Fatalf("start stream: %q %v (replayed %v)", id, err, rec.Replayed)
	}
	events := drain(t, st)
	wantComplete(t, events, 0)
	for _, ev := range events {
		if ev.RunID != id {
			t.Fatalf("event of run %s in the stream of %s", ev.RunID, id)
		}
	}
	// The same request again is a replay: the same run, its whole stream again.
	var rec2 carryon.WriteReceipt
	id2, st2, err := c.StartStream(carryon.NewContextWithReceipt(cx, &rec2), s.ID, carryon.NewRun{Message: task, WriteOptions: carryon.WriteOptions{RequestID: "s-1"}})
	if err != nil || id2 != id || !rec2.Replayed {
		t.Fatalf("replayed stream: %q %v (replayed %v)", id2, err, rec2.Replayed)
	}
	if again := drain(t, st2); len(again) != len(events) {
		t.Fatalf("replayed stream has %d events, want %d", len(again), len(events))
	}
	// A new stream from afterSeq continues where a closed one stopped.
	st3, err := c.Events(cx, id, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	var head []*carryon.Event
	for range 3 {
		ev, ok, err := st3.Next()
		if err != nil || !ok {
			t.Fatalf("next: %v %v", ok, err)
		}
		head = append(head, ev)
	}
	st3.Close()
	if _, ok, err := st3.Next(); ok || err != nil {
		t.Fatalf("next after close: %v %v", ok, err)
	}
	st4, err := c.Events(cx, id, head[len(head)-1].Seq, true)
	if err != nil {
		t.Fatal(err)
	}
	wantComplete(t, append(head, drain(t, st4)...), 0)
}

var _ carryon.RunService = (*client.Client)(nil)
