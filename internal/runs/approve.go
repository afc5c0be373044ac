package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
)

// Approve records a user's decision on an action that a waiting run stopped on, and queues the
// run to continue from its last checkpoint.
//
// An action cut off by a crash takes rerun (pending again), mark_done (succeeded without running)
// or skip (skipped, "skipped by the user"). An action whose tool asks for approval before every
// call takes approve (it runs, with in.Arguments instead of the model's when given: the journal
// keeps the model's as OriginalArgs and says "edited") or reject (it does not run; the model is
// told "rejected by the user" and the reason). Result goes only with mark_done, reason only with
// reject, arguments only with approve: any of them with another decision is EINVALID, not
// ignored. A decision on a run whose session is closed or expired is refused (ECLOSED, EEXPIRED)
// before anything changes, and the run ends with that reason: nothing it waited to do is done.
// With a request id, a repeat answers the first answer.
//
// A run that waits because a budget is spent (Run.BudgetStop) takes approve without an action id
// (approveBudget).
func (s *Service) Approve(ctx context.Context, runID string, in carryon.Approval) (*carryon.Run, error) {
	switch in.Decision {
	case carryon.DecisionRerun, carryon.DecisionMarkDone, carryon.DecisionSkip, carryon.DecisionApprove, carryon.DecisionReject:
	default:
		return nil, carryon.Errorf(carryon.EINVALID, "decision must be approve or reject (an action waiting for approval), or rerun, mark_done or skip (an action cut off by a crash), not %q", in.Decision)
	}
	if in.ActionID == "" && in.Decision != carryon.DecisionApprove && in.Decision != carryon.DecisionReject {
		return nil, carryon.Errorf(carryon.EINVALID, "action_id is required")
	}
	if len(in.Arguments) > 0 {
		if in.Decision != carryon.DecisionApprove {
			return nil, carryon.Errorf(carryon.EINVALID, "arguments go only with the decision approve")
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(in.Arguments, &obj); err != nil || obj == nil {
			return nil, carryon.Errorf(carryon.EINVALID, "arguments must be a JSON object (the tool's arguments)")
		}
		if err := carryon.CheckJSONText("arguments", in.Arguments); err != nil {
			return nil, err
		}
	}
	// A field the decision does not use is refused, not dropped: a client that sends a result
	// with approve believes the model is told it, and it would not be.
	if in.Result != "" && in.Decision != carryon.DecisionMarkDone {
		return nil, carryon.Errorf(carryon.EINVALID, "result is what the model is told of a call marked done: it goes only with the decision mark_done, not %s", in.Decision)
	}
	if in.Reason != "" && in.Decision != carryon.DecisionReject {
		return nil, carryon.Errorf(carryon.EINVALID, "reason is what the model is told of a rejected call: it goes only with the decision reject, not %s", in.Decision)
	}
	if err := carryon.CheckText("result", in.Result); err != nil {
		return nil, err
	}
	if err := carryon.CheckText("reason", in.Reason); err != nil {
		return nil, err
	}
	key := in.RequestID
	in.RequestID = ""
	var run *carryon.Run
	decide := func(tx store.Tx, own string, now time.Time) error {
		r, err := tx.GetRun(ctx, own, runID)
		if err != nil {
			return err
		}
		if err := sessionTakesWrites(ctx, tx, r, now); err != nil {
			return err
		}
		if r.Status != carryon.RunWaitingApproval {
			return carryon.Errorf(carryon.ECONFLICT, "run %s is %s, not waiting for an approval", r.ID, r.Status)
		}
		if r.BudgetStop != nil || in.ActionID == "" {
			return approveBudget(ctx, tx, r, in, now, &run)
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
		beforeCall := a.Status == carryon.ActionWaiting && a.Approval == carryon.ApprovalRequired
		cutOff := a.Status == carryon.ActionStarted || a.Status == carryon.ActionUnknown
		switch in.Decision {
		case carryon.DecisionApprove, carryon.DecisionReject:
			if !beforeCall {
				return carryon.Errorf(carryon.ECONFLICT, "action %s is %s; approve and reject decide an action that waits for approval before its call", a.ID, a.Status)
			}
		default:
			if !cutOff {
				return carryon.Errorf(carryon.ECONFLICT, "action %s is %s; rerun, mark_done and skip decide an action cut off by a crash", a.ID, a.Status)
			}
		}
		switch in.Decision {
		case carryon.DecisionApprove:
			a.Status, a.Approval = carryon.ActionPending, carryon.ApprovalApproved
			if len(in.Arguments) > 0 {
				a.OriginalArgs, a.Args, a.Approval = a.Args, in.Arguments, carryon.ApprovalEdited
			}
		case carryon.DecisionReject:
			a.Status, a.Approval, a.FinishedAt = carryon.ActionSkipped, carryon.ApprovalRejected, &now
			a.Result = "rejected by the user"
			if in.Reason != "" {
				a.Result += ": " + in.Reason
			}
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
		return appendEvent(ctx, tx, own, r.ID, carryon.EventRunApproved, map[string]any{"action_id": a.ID, "decision": in.Decision, "action": a}, now)
	}
	// Under the request id: a repeat answers the run as this decision left it and decides nothing.
	run, err := sessions.Write(ctx, s.sess, "run.approve", runID, key, in, func(tx store.Tx, own string, now time.Time) (*carryon.Run, error) {
		run = nil
		err := decide(tx, own, now)
		return run, err
	})
	if err != nil {
		s.endForSession(ctx, runID, err)
		return nil, err
	}
	if run.Status.Terminal() { // a budget stop rejected
		s.cfg.Telemetry.RunEnded(run.Agent, run.Status)
	}
	s.notify.local(runID)
	s.Wake()
	return run, nil
}

// sessionTakesWrites refuses a decision or tool outputs for a run whose session takes no writes:
// ECLOSED (closed), EEXPIRED (idle past its TTL), as every write to the session is refused. It is
// checked in the transaction of the decision, before anything of the run is changed, so that no
// effect the decision would allow (an approved file write) ever happens on a closed session.
func sessionTakesWrites(ctx context.Context, tx store.Tx, r *carryon.Run, now time.Time) error {
	_, err := sessions.LoadWritable(ctx, tx, r.OwnerID, r.SessionID, nil, nil, now)
	return err
}

// endForSession ends a waiting run whose decision or outputs were refused because its session
// takes no writes (refusal is ECLOSED or EEXPIRED): it could never go on, so it fails with the
// reason instead of waiting until someone cancels it. It changes nothing when the refusal had
// another cause, the run no longer waits, or its session takes writes again (restored meanwhile).
func (s *Service) endForSession(ctx context.Context, runID string, refusal error) {
	if code := carryon.ErrorCode(refusal); code != carryon.ECLOSED && code != carryon.EEXPIRED {
		return
	}
	var ended *carryon.Run
	// Under the sessions' clock, the one that found the session expired.
	_, err := sessions.Write(ctx, s.sess, "run.end", runID, "", struct{}{}, func(tx store.Tx, own string, now time.Time) (struct{}, error) {
		ended = nil
		r, err := tx.GetRun(ctx, own, runID)
		if err != nil || !r.Status.Waiting() {
			return struct{}{}, err
		}
		var why string
		switch carryon.ErrorCode(sessionTakesWrites(ctx, tx, r, now)) {
		case carryon.ECLOSED:
			why = "was closed"
		case carryon.EEXPIRED:
			why = "expired"
		default:
			return struct{}{}, nil
		}
		waited := "a decision"
		if r.Status == carryon.RunRequiresAction {
			waited = "tool outputs"
		}
		msg := fmt.Sprintf("session %s %s while the run waited for %s: the run ended without going on", r.SessionID, why, waited)
		if err := finishTx(ctx, tx, r, r.Attempt, carryon.RunFailed, "", msg, now); err != nil {
			return struct{}{}, err
		}
		ended = r
		return struct{}{}, nil
	})
	if err != nil {
		s.log.Warn("end a run whose session takes no writes", "run", runID, "err", err)
		return
	}
	if ended != nil {
		s.cfg.Telemetry.RunEnded(ended.Agent, carryon.RunFailed)
		s.notify.publish(runID)
	}
}

// approveBudget continues a run that waits because a budget is spent: decision approve, no action
// id, nothing else; reject ends it, cancelled. An approved run is queued again; its next step checks the budgets anew, so a budget
// that was not raised stops it again at once. A run that waits for an action takes no approval
// without the action's id.
func approveBudget(ctx context.Context, tx store.Tx, r *carryon.Run, in carryon.Approval, now time.Time, out **carryon.Run) error {
	switch {
	case r.BudgetStop == nil:
		return carryon.Errorf(carryon.EINVALID, "action_id is required: run %s waits for a decision on an action", r.ID)
	case in.ActionID != "":
		return carryon.Errorf(carryon.EINVALID, "run %s waits because a budget is spent, not for an action: approve it without action_id (raise the budget first, or it stops again)", r.ID)
	case len(in.Arguments) > 0:
		return carryon.Errorf(carryon.EINVALID, "arguments go only with the approval of an action; run %s waits because a budget is spent", r.ID)
	}
	if in.Decision == carryon.DecisionReject {
		// Not going on: the run ends, cancelled, with the stop it ended at.
		msg := "the budget stop was rejected: " + r.BudgetStop.Error()
		if in.Reason != "" {
			msg += " (" + in.Reason + ")"
		}
		*out = r
		return finishTx(ctx, tx, r, r.Attempt, carryon.RunCancelled, "", msg, now)
	}
	stop := r.BudgetStop
	r.Status, r.Error, r.BudgetStop, r.UpdatedAt, r.FinishedAt = carryon.RunQueued, "", nil, now, nil
	if err := tx.UpdateRun(ctx, r, r.Attempt); err != nil {
		return err
	}
	*out = r
	return appendEvent(ctx, tx, r.OwnerID, r.ID, carryon.EventRunApproved, map[string]any{"decision": in.Decision, "reason": carryon.ReasonBudgetExceeded, "budget": stop}, now)
}
