package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/failpoint"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/tool"
)

// maxResultBytes bounds a tool result kept in the journal and sent back to the model.
const maxResultBytes = 64 << 10

// NeedsApproval stops a run whose action was cut off and cannot be settled safely: a user must
// decide whether to run it again, count it as done, or skip it.
type NeedsApproval struct {
	Action *carryon.Action
	Reason string
}

func (e *NeedsApproval) Error() string {
	return fmt.Sprintf("action %s (%s) needs a decision: %s", e.Action.ID, e.Action.Tool, e.Reason)
}

// NeedsOutputs stops a run whose model called client tools: the client runs them and posts their
// outputs (runs.Service.SubmitToolOutputs); the journal keeps the calls waiting meanwhile.
type NeedsOutputs struct {
	Actions []*carryon.Action
}

func (e *NeedsOutputs) Error() string {
	return fmt.Sprintf("the run waits for the outputs of %d client tool call(s)", len(e.Actions))
}

// approvalReason is why an action whose tool asks for approval waits.
const approvalReason = "its tool asks for approval before every call"

// plan turns the model's tool calls into the step's pending actions.
func (e *Engine) plan(run *carryon.Run, step int, calls []model.ToolCall) []*carryon.Action {
	now := e.now()
	out := make([]*carryon.Action, len(calls))
	for i, c := range calls {
		a := &carryon.Action{
			ID: carryon.NewID("act_"), RunID: run.ID, SessionID: run.SessionID, Step: step, Index: i,
			Attempt: run.Attempt, CallID: c.ID, Tool: c.Name, Args: c.Arguments,
			Effect: carryon.EffectUnsafe, Status: carryon.ActionPending,
			IdempotencyKey: fmt.Sprintf("%s/%d/%d", run.ID, step, i), StartedAt: now,
		}
		if t, ok := e.tools.Get(c.Name); ok {
			a.Effect = t.Effect()
			if e.cfg.Approval != nil && e.cfg.Approval(c.Name) {
				a.Approval = carryon.ApprovalRequired
			}
		} else if clientTool(run, c.Name) {
			a.Executor = carryon.ExecutorClient
		}
		out[i] = a
	}
	return out
}

// runsAtOnce says whether a new call runs as soon as the step is planned: any call but a client
// tool's or one that asks for approval, which wait.
func runsAtOnce(a *carryon.Action) bool {
	return a.Executor != carryon.ExecutorClient && a.Approval != carryon.ApprovalRequired
}

// runTools settles the step's actions in order and returns the tool result messages. A pending
// action runs. A finished one (from an earlier attempt) keeps its outcome. One left started by a
// crash is settled by its effect class: read and idempotent calls run again (with the same
// idempotency key), a reconcilable one asks its tool whether it took effect, an unsafe one
// stops the run for a user's decision. fresh, when not nil, is the first action, which the
// step's plan journaled started for it to run now: it runs, and is not settled.
//
// A call's outcome is journaled with the next write: the next call's start, or (the call it
// returns as done) the step's checkpoint. Before anything else is done (a call settled, a wait,
// a stop), it is journaled on its own.
//
// Two kinds of call wait instead of running: a client tool's call is journaled waiting and the
// others of the step go on, then the run stops for the client's outputs (*NeedsOutputs); a call
// whose tool asks for approval is journaled waiting and the run stops there for a user's approval
// (*NeedsApproval). Both are settled outside the run (runs.Service.SubmitToolOutputs, Approve),
// which leaves them finished or pending (approved) for the next attempt.
//
// It also returns the working memory changes of the step: the patch of every update_working_memory
// call that succeeded, in order, read from the journal (so a step resumed after a crash stages
// the same changes). The tool only previews its change; CommitStep stores the changes with the
// step's messages.
func (e *Engine) runTools(ctx context.Context, hub Hub, run *carryon.Run, actions []*carryon.Action, fresh *carryon.Action, emit emitFunc) ([]carryon.NewMessage, []json.RawMessage, *carryon.Action, error) {
	var msgs []carryon.NewMessage
	var outputs []*carryon.Action
	var done *carryon.Action // a call that ran, its outcome not journaled yet
	journal := func(ctx context.Context) error {
		a := done
		done = nil
		return journalOutcome(ctx, hub, run, a, emit)
	}
	staged := &stagedMemory{}
	for _, a := range actions {
		if err := context.Cause(ctx); ctx.Err() != nil {
			// Asked to stop or cut off between two calls: the rest stay pending, and the call that
			// ran keeps its outcome (the write is fenced: a runner that lost the run stores nothing).
			if jerr := journal(context.WithoutCancel(ctx)); jerr != nil {
				return nil, nil, nil, jerr
			}
			return nil, nil, nil, err
		}
		ran := false
		var err error
		switch {
		case a == fresh:
			ran, err = e.execute(ctx, hub, run, nil, a, true, staged, emit)
		case a.Status == carryon.ActionPending && runsAtOnce(a):
			prev := done
			done = nil
			ran, err = e.execute(ctx, hub, run, prev, a, false, staged, emit)
		default:
			if err := journal(ctx); err != nil {
				return nil, nil, nil, err
			}
			switch {
			case a.Executor == carryon.ExecutorClient && (a.Status == carryon.ActionPending || a.Status == carryon.ActionWaiting):
				if err := e.wait(ctx, hub, run, a); err != nil {
					return nil, nil, nil, err
				}
				outputs = append(outputs, a)
				continue
			case a.Approval == carryon.ApprovalRequired && (a.Status == carryon.ActionPending || a.Status == carryon.ActionWaiting):
				if err := e.wait(ctx, hub, run, a); err != nil {
					return nil, nil, nil, err
				}
				return nil, nil, nil, &NeedsApproval{Action: a, Reason: approvalReason}
			case a.Status == carryon.ActionStarted:
				ran, err = e.settle(ctx, hub, run, a, staged, emit)
			case a.Status == carryon.ActionUnknown:
				return nil, nil, nil, &NeedsApproval{Action: a, Reason: "its outcome is unknown"}
			}
		}
		if err != nil {
			return nil, nil, nil, err
		}
		if ran {
			done = a
		}
		staged.add(a)
		msgs = append(msgs, carryon.NewMessage{Role: carryon.RoleTool, Content: resultText(a), ToolCallID: a.CallID, Name: a.Tool})
	}
	if err := context.Cause(ctx); ctx.Err() != nil {
		// Stopped during the last call: it finished, and its outcome is kept; the checkpoint is not.
		if jerr := journal(context.WithoutCancel(ctx)); jerr != nil {
			return nil, nil, nil, jerr
		}
		return nil, nil, nil, err
	}
	if len(outputs) > 0 {
		if err := journal(ctx); err != nil {
			return nil, nil, nil, err
		}
		return nil, nil, nil, &NeedsOutputs{Actions: outputs}
	}
	return msgs, staged.patches, done, nil
}

// wait journals a call as waiting (for a client's output or a user's approval) unless it already is.
func (e *Engine) wait(ctx context.Context, hub Hub, run *carryon.Run, a *carryon.Action) error {
	if a.Status == carryon.ActionWaiting {
		return nil
	}
	a.Status, a.Attempt = carryon.ActionWaiting, run.Attempt
	if _, err := hub.FinishAction(ctx, run, a); err != nil {
		return fmt.Errorf("journal tool call %s as waiting: %w", a.Tool, err)
	}
	return nil
}

// clientTool says whether the run declared a client tool of that name.
func clientTool(run *carryon.Run, name string) bool {
	for _, t := range run.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// settle decides an action that a crash left started. It returns true when the call ran again,
// its outcome for the caller to journal.
func (e *Engine) settle(ctx context.Context, hub Hub, run *carryon.Run, a *carryon.Action, staged *stagedMemory, emit emitFunc) (bool, error) {
	t, ok := e.tools.Get(a.Tool)
	if !ok {
		return false, &NeedsApproval{Action: a, Reason: "its tool is no longer available"}
	}
	switch t.Effect() {
	case carryon.EffectRead, carryon.EffectIdempotent:
		return e.execute(ctx, hub, run, nil, a, false, staged, emit)
	case carryon.EffectReconcilable:
		r, ok := t.(tool.Reconciler)
		if !ok {
			break
		}
		outcome, err := r.Reconcile(ctx, e.call(hub, run, a, staged))
		switch {
		case err == nil && outcome == tool.Applied:
			now := e.now()
			a.Status, a.Result, a.FinishedAt, a.Attempt = carryon.ActionSucceeded, "done (completed before an interruption; the result was checked)", &now, run.Attempt
			evs, err := hub.FinishAction(ctx, run, a)
			if err != nil {
				return false, err
			}
			return false, emit(evs)
		case err == nil && outcome == tool.NotApplied:
			return e.execute(ctx, hub, run, nil, a, false, staged, emit)
		}
		return false, &NeedsApproval{Action: a, Reason: "it was cut off and its tool cannot tell whether it took effect"}
	}
	return false, &NeedsApproval{Action: a, Reason: "it was cut off and is not safe to run again"}
}

// execute journals the action as started (with prev's outcome, when prev is not nil; not at all
// when started, which the step's plan journaled), runs it and keeps the outcome in a for the
// next write to journal: it returns true once the call ran. A failing tool is not a failing run:
// the model gets the error and may correct itself.
//
// A user's stop (cancel, interrupt) does not cut a tool call off: the call finishes and its outcome
// is journaled before the run stops. Losing the run (fencing) or a shutdown does cut it off; the
// journal then keeps it started for the next attempt to settle.
func (e *Engine) execute(ctx context.Context, hub Hub, run *carryon.Run, prev, a *carryon.Action, started bool, staged *stagedMemory, emit emitFunc) (bool, error) {
	ctx, span := e.cfg.Telemetry.StartTool(ctx, a, e.describe(a.Tool))
	err := e.executeTraced(ctx, hub, run, prev, a, started, staged, emit)
	span.End(a, err)
	return err == nil, err
}

// describe is the description of a tool of the engine, or "".
func (e *Engine) describe(name string) string {
	if t, ok := e.tools.Get(name); ok {
		return t.Description()
	}
	return ""
}

// executeTraced is execute inside its span.
func (e *Engine) executeTraced(ctx context.Context, hub Hub, run *carryon.Run, prev, a *carryon.Action, started bool, staged *stagedMemory, emit emitFunc) error {
	if !started {
		a.Status, a.Attempt, a.StartedAt = carryon.ActionStarted, run.Attempt, e.now()
		evs, err := hub.StartAction(ctx, run, prev, a)
		if err != nil {
			if jerr := keepOutcome(ctx, hub, run, prev, emit); jerr != nil {
				return jerr
			}
			return fmt.Errorf("journal tool call %s: %w", a.Tool, err)
		}
		if prev != nil {
			failpoint.Hit(failpoint.ActionFinished)
		}
		if err := emit(evs); err != nil {
			return err
		}
		failpoint.Hit(failpoint.ActionStarted)
	}
	tctx, done := toolContext(ctx)
	defer done()
	res, err := e.tools.Invoke(tctx, a.Tool, e.call(hub, run, a, staged))
	if tctx.Err() != nil {
		return context.Cause(tctx) // cut off: the journal keeps it started for recovery to settle
	}
	failpoint.Hit(failpoint.ActionRan)
	now := e.now()
	a.FinishedAt = &now
	a.FingerprintBefore, a.FingerprintAfter = res.FingerprintBefore, res.FingerprintAfter
	if err != nil {
		a.Status, a.Error, a.Result = carryon.ActionFailed, clip(err.Error()), ""
	} else {
		a.Status, a.Result, a.Error = carryon.ActionSucceeded, clip(res.Content), ""
	}
	return nil
}

// keepOutcome journals the outcome of done (a call that ran) on its own when the write that was to
// carry it failed because the run was stopped meanwhile (ctx is done): a user's stop lets a call
// finish and keeps its outcome. Otherwise (done nil, or the write failed for another reason) it
// does nothing.
func keepOutcome(ctx context.Context, hub Hub, run *carryon.Run, done *carryon.Action, emit emitFunc) error {
	if ctx.Err() == nil {
		return nil
	}
	return journalOutcome(context.WithoutCancel(ctx), hub, run, done, emit)
}

// journalOutcome journals the outcome of a, a call that ran (nothing when a is nil), in a write of
// its own.
func journalOutcome(ctx context.Context, hub Hub, run *carryon.Run, a *carryon.Action, emit emitFunc) error {
	if a == nil {
		return nil
	}
	evs, err := hub.FinishAction(ctx, run, a)
	if err != nil {
		return fmt.Errorf("journal tool result %s: %w", a.Tool, err)
	}
	failpoint.Hit(failpoint.ActionFinished)
	return emit(evs)
}

// toolContext is ctx for a tool call, minus a user's stop: cancelled with ctx's cause unless that
// cause is an *ErrStopped, so a cancel or an interrupt lets the call finish and be journaled.
func toolContext(ctx context.Context) (context.Context, func()) {
	tctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		var stopped *ErrStopped
		if cause := context.Cause(ctx); !errors.As(cause, &stopped) {
			cancel(cause)
		}
	})
	return tctx, func() { stop(); cancel(nil) }
}

func (e *Engine) call(hub Hub, run *carryon.Run, a *carryon.Action, staged *stagedMemory) tool.Call {
	c := tool.Call{
		Args: a.Args, SessionID: run.SessionID, RunID: run.ID, IdempotencyKey: a.IdempotencyKey,
		Workspace: e.Workspace(run.SessionID), WorkingMemory: workingMemoryEditor{hub: hub, run: run, staged: staged},
		OwnerID: run.OwnerID, LongTerm: e.cfg.LongTerm,
		Fence: tool.Fence{RunID: run.ID, Attempt: run.Attempt},
	}
	if j, ok := hub.(SessionJournal); ok {
		c.Journal = sessionJournal{j: j, run: run, tool: a.Tool}
	}
	return c
}

// sessionJournal reads, for one call, the earlier calls of its tool in the run's session.
type sessionJournal struct {
	j    SessionJournal
	run  *carryon.Run
	tool string
}

func (s sessionJournal) LastFingerprint(ctx context.Context) (string, error) {
	a, err := s.j.LastToolAction(ctx, s.run, s.tool)
	if err != nil || a == nil {
		return "", err
	}
	return a.FingerprintAfter, nil
}

// resultText is what the model sees of an action's outcome.
func resultText(a *carryon.Action) string {
	switch {
	case a.Status == carryon.ActionFailed:
		return "error: " + a.Error
	case a.Result == "":
		return "(no output)"
	}
	return a.Result
}

// clip makes s storable text (see storable) and bounds it to maxResultBytes, cutting on a rune
// boundary.
func clip(s string) string {
	s = storable(s)
	if len(s) <= maxResultBytes {
		return s
	}
	cut := maxResultBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "\n…(truncated)"
}

// storable makes text from a model or a tool fit carryon's text rule (valid UTF-8 without NUL):
// invalid bytes and NUL characters become U+FFFD, so odd output never fails the run's writes.
func storable(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// workingMemoryTool is the built-in tool whose changes the step stages (tool.UpdateWorkingMemory).
const workingMemoryTool = "update_working_memory"

// stagedMemory holds the working memory changes of one step, in the order of its calls.
type stagedMemory struct {
	patches []json.RawMessage
}

// add stages the change of a, if a is an update_working_memory call of the engine's tool that
// succeeded: its arguments' patch.
func (m *stagedMemory) add(a *carryon.Action) {
	if a.Tool != workingMemoryTool || a.Executor == carryon.ExecutorClient || a.Status != carryon.ActionSucceeded {
		return
	}
	var args struct {
		Patch json.RawMessage `json:"patch"`
	}
	if json.Unmarshal(a.Args, &args) == nil && len(args.Patch) > 0 {
		m.patches = append(m.patches, args.Patch)
	}
}

// workingMemoryEditor lets the update_working_memory tool change the working memory for the run:
// the change is previewed over the step's earlier ones and returned to the model; the step's
// checkpoint stores it (runTools reads it back from the journaled call).
type workingMemoryEditor struct {
	hub    Hub
	run    *carryon.Run
	staged *stagedMemory
}

func (m workingMemoryEditor) PatchWorkingMemory(ctx context.Context, patch json.RawMessage) (carryon.WorkingMemory, error) {
	var patches []json.RawMessage
	if m.staged != nil {
		patches = append(patches, m.staged.patches...)
	}
	return m.hub.WorkingMemoryPreview(ctx, m.run, append(patches, patch))
}
