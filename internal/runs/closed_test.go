package runs_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
)

// TestClosedSessionTakesNoDecision: a run waits for the approval of a write_file call in its
// session's workspace; its session is closed, expired or deleted. Approving or rejecting is then
// refused (ECLOSED, EEXPIRED, ENOTFOUND) before anything happens: the file is not written, the
// journal's action still waits, no run.approved event is stored, a repeat with the same request
// id is refused again (a refusal stores no request id), and the run ends failed with the reason.
// (Before, the approval was taken on a closed session: the runner wrote the file, then the run
// failed on its first write to the session.)
func TestClosedSessionTakesNoDecision(t *testing.T) {
	t.Parallel()
	for _, d := range drivers() {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			st := d.open(t)
			clk := newClock()
			e := newHubEnv(t, st, sessions.Config{Now: clk.Now})
			m := &asker{calls: []model.ToolCall{{ID: "call_f", Name: "write_file",
				Arguments: json.RawMessage(`{"path":"notes.md","content":"written on a closed session\n"}`)}}}
			svc := toolRunner(t, st, e.sess, e.data, m, runs.Config{}, []string{"write_file"})
			work(t, svc)
			for _, c := range []struct {
				name     string
				end      func(t *testing.T, sid string) // what happens to the session while the run waits
				decision carryon.Decision
				code     string
				reason   string // in the ended run's error; "" when the run went with its session
			}{
				{"closed, approve", func(t *testing.T, sid string) { closeSession(t, e, sid) },
					carryon.DecisionApprove, carryon.ECLOSED, "was closed while the run waited for a decision"},
				{"closed, reject", func(t *testing.T, sid string) { closeSession(t, e, sid) },
					carryon.DecisionReject, carryon.ECLOSED, "was closed while the run waited for a decision"},
				{"expired, approve", func(t *testing.T, sid string) { clk.Advance(carryon.DefaultIdleTTL + time.Hour) },
					carryon.DecisionApprove, carryon.EEXPIRED, "expired while the run waited for a decision"},
				{"deleted, approve", func(t *testing.T, sid string) {
					if err := e.sess.Delete(e.alice, sid, carryon.WriteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
					carryon.DecisionApprove, carryon.ENOTFOUND, ""},
			} {
				s, run := e.startRun(t, svc, "Write the notes")
				if run = waitRun(t, svc, e.alice, run.ID); run.Status != carryon.RunWaitingApproval || run.PendingAction == nil {
					t.Fatalf("%s: run = %s (%s), want waiting_approval", c.name, run.Status, run.Error)
				}
				act := run.PendingAction
				c.end(t, s.ID)
				in := carryon.Approval{ActionID: act.ID, Decision: c.decision, RetryOptions: carryon.RetryOptions{RequestID: "decide-" + run.ID}}
				for range 2 { // the repeat is refused again
					_, err := svc.Approve(e.alice, run.ID, in)
					if err == nil {
						done := waitRun(t, svc, e.alice, run.ID)
						_, statErr := os.Stat(filepath.Join(e.data, "workspaces", s.ID, "notes.md"))
						t.Fatalf("%s: the decision was taken; the run then %s (%s), notes.md written: %v", c.name, done.Status, done.Error, statErr == nil)
					}
					wantCode(t, err, c.code)
				}
				if _, err := os.Stat(filepath.Join(e.data, "workspaces", s.ID, "notes.md")); !os.IsNotExist(err) {
					t.Fatalf("%s: notes.md was written (stat: %v)", c.name, err)
				}
				if c.reason == "" {
					if _, err := svc.GetRun(e.alice, run.ID); carryon.ErrorCode(err) != carryon.ENOTFOUND {
						t.Fatalf("%s: the run outlived its session: %v", c.name, err)
					}
					continue
				}
				ended := getRun(t, st, run.ID)
				if ended.Status != carryon.RunFailed || !strings.Contains(ended.Error, c.reason) || ended.FinishedAt == nil {
					t.Fatalf("%s: run = %s %q, want failed with %q", c.name, ended.Status, ended.Error, c.reason)
				}
				acts, err := svc.Actions(e.alice, run.ID)
				if err != nil || len(acts) != 1 || acts[0].Status != carryon.ActionWaiting || acts[0].Approval != carryon.ApprovalRequired {
					t.Fatalf("%s: journal = %+v, %v; want the call still waiting, undecided", c.name, acts, err)
				}
				if ev := lastEvent(t, st, run.ID); ev.Type != carryon.EventRunFailed || hasEvent(t, st, run.ID, carryon.EventRunApproved) {
					t.Fatalf("%s: last event %s (or a run.approved was stored)", c.name, ev.Type)
				}
			}
		})
	}
}

// TestClosedSessionTakesNoToolOutputs: outputs for a run that waits for a client's tool call are
// refused once its session is closed (ECLOSED), again on a repeat with the request id; the call
// keeps waiting in the journal, and the run ends failed with the reason.
func TestClosedSessionTakesNoToolOutputs(t *testing.T) {
	t.Parallel()
	for _, d := range drivers() {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			st := d.open(t)
			e := newHubEnv(t, st, sessions.Config{})
			m := &asker{calls: []model.ToolCall{{ID: "call_w", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}}
			svc := toolRunner(t, st, e.sess, e.data, m, runs.Config{}, nil)
			work(t, svc)
			s, err := e.sess.Create(e.alice, carryon.NewSession{})
			if err != nil {
				t.Fatal(err)
			}
			run, err := svc.Start(e.alice, s.ID, carryon.NewRun{Message: "Weather?", Tools: []carryon.ClientTool{weather}})
			if err != nil {
				t.Fatal(err)
			}
			if run = waitRun(t, svc, e.alice, run.ID); run.Status != carryon.RunRequiresAction {
				t.Fatalf("run = %s (%s), want requires_action", run.Status, run.Error)
			}
			closeSession(t, e, s.ID)
			out := carryon.ToolOutputs{Outputs: []carryon.ToolOutput{{CallID: "call_w", Output: "sunny"}}, RetryOptions: carryon.RetryOptions{RequestID: "outputs-1"}}
			for range 2 {
				_, err := svc.SubmitToolOutputs(e.alice, run.ID, out)
				wantCode(t, err, carryon.ECLOSED)
			}
			ended := getRun(t, st, run.ID)
			if ended.Status != carryon.RunFailed || !strings.Contains(ended.Error, "was closed while the run waited for tool outputs") {
				t.Fatalf("run = %s %q, want failed with the reason", ended.Status, ended.Error)
			}
			acts, err := svc.Actions(e.alice, run.ID)
			if err != nil || len(acts) != 1 || acts[0].Status != carryon.ActionWaiting || acts[0].Result != "" {
				t.Fatalf("journal = %+v, %v; want the call still waiting, without a result", acts, err)
			}
			if hasEvent(t, st, run.ID, carryon.EventToolOutputs) {
				t.Fatal("a run.tool_outputs event was stored")
			}
		})
	}
}

// closeSession closes the session of alice.
func closeSession(t *testing.T, e *hubEnv, sid string) {
	t.Helper()
	if _, err := e.sess.Close(e.alice, sid, carryon.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// hasEvent reports whether the run stored an event of type typ.
func hasEvent(t *testing.T, st store.Store, runID string, typ carryon.EventType) bool {
	t.Helper()
	var evs []*carryon.Event
	if err := st.Read(context.Background(), func(tx store.Tx) error {
		var err error
		evs, err = tx.EventsAfter(context.Background(), "usr_alice", runID, 0, 10000)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Type == typ {
			return true
		}
	}
	return false
}
