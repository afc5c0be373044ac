package runs

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/sessions"
	"github.com/carryon-hub/carryon/store"
)

// Approve records a user's decision on an action that a waiting run stopped on, and queues the
// run to continue from its last checkpoint: rerun makes the action pending again, mark_done
// records it as succeeded without running it, skip records it as skipped ("skipped by the user").
// With a request id, a repeat answers the first answer.
func (s *Service) Approve(ctx context.Context, runID string, in carryon.Approval) (*carryon.Run, error) {
	switch in.Decision {
	case carryon.DecisionRerun, carryon.DecisionMarkDone, carryon.DecisionSkip:
	default:
		return nil, carryon.Errorf(carryon.EINVALID, "decision must be rerun, mark_done or skip, not %q", in.Decision)
	}
	if in.ActionID == "" {
		return nil, carryon.Errorf(carryon.EINVALID, "action_id is required")
	}
	key := in.RequestID
	in.RequestID = ""
	var run *carryon.Run
	decide := func(tx store.Tx, own string, now time.Time) error {
		r, err := tx.GetRun(ctx, own, runID)
		if err != nil {
			return err
		}
		if r.Status != carryon.RunWaitingApproval {
			return carryon.Errorf(carryon.ECONFLICT, "run %s is %s, not waiting for an approval", r.ID, r.Status)
		}
		acts, err := tx.ListActions(ctx, own, runID)
		if err != nil {
			return err
		}
		var a *carryon.Action
		for _, x := range acts {
			if x.ID == in.ActionID {
				a = x
			}
		}
		if a == nil {
			return carryon.Errorf(carryon.ENOTFOUND, "run %s has no action %s", runID, in.ActionID)
		}
		if a.Status != carryon.ActionStarted && a.Status != carryon.ActionUnknown {
			return carryon.Errorf(carryon.ECONFLICT, "action %s is %s; only a cut-off action waits for a decision", a.ID, a.Status)
		}
		switch in.Decision {
		case carryon.DecisionRerun:
			a.Status, a.FinishedAt = carryon.ActionPending, nil
		case carryon.DecisionMarkDone:
			a.Status, a.Result, a.FinishedAt = carryon.ActionSucceeded, in.Result, &now
			if a.Result == "" {
				a.Result = "marked done by the user"
			}
		case carryon.DecisionSkip:
			a.Status, a.Result, a.FinishedAt = carryon.ActionSkipped, "skipped by the user", &now
		}
		if err := tx.UpdateAction(ctx, own, a); err != nil {
			return err
		}
		r.Status, r.Error, r.UpdatedAt, r.FinishedAt = carryon.RunQueued, "", now, nil
		if err := tx.UpdateRun(ctx, r, r.Attempt); err != nil {
			return err
		}
		run = r
		return appendEvent(ctx, tx, own, r.ID, carryon.EventRunApproved, map[string]any{"action_id": a.ID, "decision": in.Decision}, now)
	}
	// Under the request id: a repeat answers the run as this decision left it and decides nothing.
	run, err := sessions.Write(ctx, s.sess, "run.approve", runID, key, in, func(tx store.Tx, own string, now time.Time) (*carryon.Run, error) {
		run = nil
		err := decide(tx, own, now)
		return run, err
	})
	if err != nil {
		return nil, err
	}
	s.notify.publish(runID)
	s.Wake()
	return run, nil
}
