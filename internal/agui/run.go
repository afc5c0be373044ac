package agui

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/carryon-hub/carryon"
)

// start says where the AG-UI run begins in the carryon run's events: at the run's first event
// (a new run), at the run.tool_outputs event that took these call ids, or at the run.approved
// event of this action.
type start struct {
	runID    string
	callIDs  []string
	actionID string
}

// run serves one RunAgentInput: it resolves the thread, plans the input's writes and checks
// them, then writes (the state, then one of: a new run with the new messages, the outputs a
// waiting run asked for, the decision an interrupted run waits for) and streams the run. Every
// refusal before the stream is an HTTP error; nothing is written before the input passed its
// checks (a thread's session is made only then).
func (h *Handler) run(w http.ResponseWriter, r *http.Request) {
	in, err := decodeInput(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx := r.Context()
	pl, err := h.plan(ctx, in)
	if err != nil {
		writeError(w, err)
		return
	}
	st, err := h.write(ctx, in, pl)
	if err != nil {
		writeError(w, err)
		return
	}
	h.stream(w, r, in, pl.sess.ID, st)
}

// plan is what an input writes, decided from the input and the thread before anything is
// written, the same on a repeat.
type plan struct {
	sess    *carryon.Session // nil: a new thread, made by write
	props   carryonProps
	latest  *carryon.Run // the thread's newest run
	outputs []carryon.ToolOutput
	approve *carryon.Approval
	run     *carryon.NewRun
}

// plan reads the thread and checks the input against it.
func (h *Handler) plan(ctx context.Context, in *runInput) (*plan, error) {
	p, err := props(in.ForwardedProps)
	if err != nil {
		return nil, err
	}
	tools, err := clientTools(in.Tools)
	if err != nil {
		return nil, err
	}
	pl := &plan{props: p}
	if pl.sess, err = h.thread(ctx, in); err != nil {
		return nil, err
	}
	sessionID := ""
	if pl.sess != nil {
		sessionID = pl.sess.ID
	}
	var msgs []carryon.NewMessage
	for _, m := range in.Messages {
		if known(sessionID, m.ID) {
			continue
		}
		if nm, skip := newMessage(m); !skip {
			msgs = append(msgs, nm)
		}
	}
	if len(msgs) > carryon.MaxAppendMessages {
		return nil, carryon.Errorf(carryon.EINVALID, "the input has %d new messages; at most %d are taken at once (as POST /v1/sessions/{id}/messages)", len(msgs), carryon.MaxAppendMessages)
	}
	if pl.sess != nil {
		if pl.latest, err = h.latestRun(ctx, sessionID); err != nil {
			return nil, err
		}
	}
	if pl.latest != nil && len(in.Resume) == 0 {
		clientCalls, err := h.clientCalls(ctx, pl.latest)
		if err != nil {
			return nil, err
		}
		var keep []carryon.NewMessage
		for _, m := range msgs {
			if m.Role == carryon.RoleTool && clientCalls[m.ToolCallID] {
				pl.outputs = append(pl.outputs, carryon.ToolOutput{CallID: m.ToolCallID, Output: m.Content})
				continue
			}
			keep = append(keep, m)
		}
		if len(pl.outputs) > 0 && len(keep) > 0 {
			return nil, carryon.Errorf(carryon.EINVALID, "the input answers the client tool calls of run %s and has other new messages too: send the tool results alone, the other messages with the next input", pl.latest.ID)
		}
		msgs = keep
	}
	switch {
	case len(in.Resume) > 0:
		if len(msgs) > 0 {
			return nil, carryon.Errorf(carryon.EINVALID, "the input answers an interrupt and has new messages too: send the resume entry alone, the messages with the next input")
		}
		if pl.latest == nil {
			return nil, carryon.Errorf(carryon.ECONFLICT, "thread %s has no run waiting for a decision", in.ThreadID)
		}
		a, err := approval(in.Resume[0])
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(a.ActionID, BudgetInterrupt) {
			a.ActionID = "" // a budget stop is approved as a whole, with no action
		}
		pl.approve = &a
		return pl, nil
	case len(pl.outputs) > 0:
		return pl, nil
	case len(msgs) == 0:
		return nil, carryon.Errorf(carryon.EINVALID, "the input has no new message to run on: every message in it is carryon's already (ids <session id>:<seq>), or there is none")
	}
	last := msgs[len(msgs)-1]
	nr := &carryon.NewRun{Tools: tools, Agent: p.Agent, Multitask: carryon.MultitaskReject,
		WriteOptions: carryon.WriteOptions{RequestID: in.RunID}}
	switch last.Role {
	case carryon.RoleUser:
		nr.Message, nr.Input = last.Content, msgs[:len(msgs)-1]
	case carryon.RoleTool:
		nr.Input = msgs // the run continues after the tool's output
	default:
		return nil, carryon.Errorf(carryon.EINVALID, "the new messages end with a %s message: a run starts on a user's message (or continues after a tool message)", last.Role)
	}
	if len(nr.Input) == 0 {
		nr.Input = nil
	}
	pl.run = nr
	return pl, nil
}

// clientTools are the input's tools as carryon's client-side tools.
func clientTools(in []clientTool) ([]carryon.ClientTool, error) {
	var out []carryon.ClientTool
	for i, t := range in {
		if t.Name == "" {
			return nil, carryon.Errorf(carryon.EINVALID, "tools[%d].name is required", i)
		}
		params := t.Parameters
		if isNull(params) {
			params = nil
		}
		out = append(out, carryon.ClientTool{Name: t.Name, Description: t.Description, Parameters: params})
	}
	return out, nil
}

// thread returns the session of the input's threadId: the session with that id when it is a
// carryon session id (ENOTFOUND when it is missing or another user's), else the caller's
// session with that external id, or nil when there is none yet.
func (h *Handler) thread(ctx context.Context, in *runInput) (*carryon.Session, error) {
	if strings.HasPrefix(in.ThreadID, carryon.SessionIDPrefix) {
		v, err := h.cfg.Sessions.Get(ctx, in.ThreadID, carryon.GetOptions{Messages: -1})
		if err != nil {
			if carryon.ErrorCode(err) == carryon.ENOTFOUND {
				return nil, carryon.Errorf(carryon.ENOTFOUND, "no thread %s", in.ThreadID)
			}
			return nil, err
		}
		return &v.Session, nil
	}
	page, err := h.cfg.Sessions.List(ctx, carryon.SessionFilter{ExternalID: in.ThreadID})
	if err != nil {
		return nil, err
	}
	if len(page.Items) == 0 {
		return nil, nil
	}
	return page.Items[0], nil
}

// write makes the planned writes and returns where the stream begins. A new thread's session is
// made first (with the thread id as its external id, so that a repeat finds it); when the run
// start then refuses the input, the session it made is deleted again.
func (h *Handler) write(ctx context.Context, in *runInput, pl *plan) (start, error) {
	made := false
	if pl.sess == nil {
		title := ""
		for _, m := range in.Messages {
			if m.Role == "user" {
				title, _ = textOf(m.Content, "")
			}
		}
		s, err := h.cfg.Sessions.Create(ctx, carryon.NewSession{ExternalID: in.ThreadID, Title: clip(title), TitleDerived: title != "", Agent: pl.props.Agent})
		if err != nil {
			return start{}, err
		}
		pl.sess, made = s, true
	}
	st, err := h.writeIn(ctx, in, pl)
	if err != nil && made && carryon.ErrorCode(err) == carryon.EINVALID {
		_ = h.cfg.Sessions.Delete(ctx, pl.sess.ID, carryon.WriteOptions{}) // a refused input leaves nothing behind
	}
	return st, err
}

// writeIn writes the state and then the run, the outputs or the decision.
func (h *Handler) writeIn(ctx context.Context, in *runInput, pl *plan) (start, error) {
	sessionID := pl.sess.ID
	expected := pl.props.ExpectedVersion
	if len(in.State) > 0 && !isNull(in.State) {
		if !h.used(ctx, in.RunID) {
			if err := h.patchState(ctx, sessionID, in, expected); err != nil {
				return start{}, err
			}
		}
		expected = nil // checked by the state's write
	}
	opts := carryon.RetryOptions{RequestID: in.RunID}
	switch {
	case pl.approve != nil:
		pl.approve.RetryOptions = opts
		if _, err := h.cfg.Runs.Approve(ctx, pl.latest.ID, *pl.approve); err != nil {
			return start{}, err
		}
		return start{runID: pl.latest.ID, actionID: pl.approve.ActionID}, nil
	case len(pl.outputs) > 0:
		if _, err := h.cfg.Runs.SubmitToolOutputs(ctx, pl.latest.ID, carryon.ToolOutputs{Outputs: pl.outputs, RetryOptions: opts}); err != nil {
			return start{}, err
		}
		ids := make([]string, len(pl.outputs))
		for i, o := range pl.outputs {
			ids[i] = o.CallID
		}
		return start{runID: pl.latest.ID, callIDs: ids}, nil
	}
	pl.run.ExpectedVersion = expected
	run, err := h.cfg.Runs.Start(ctx, sessionID, *pl.run)
	if err != nil {
		return start{}, err
	}
	return start{runID: run.ID}, nil
}

// used reports whether the run id was used already (a repeat of an input): its state was
// written then, and is not looked at again (it may have changed since).
func (h *Handler) used(ctx context.Context, runID string) bool {
	l, ok := h.cfg.Sessions.(carryon.RequestIDLookup)
	if !ok {
		return false
	}
	_, used, err := l.RequestIDUsed(ctx, runID)
	return err == nil && used
}

// latestRun is the session's newest run, or nil.
func (h *Handler) latestRun(ctx context.Context, sessionID string) (*carryon.Run, error) {
	page, err := h.cfg.Runs.ListRuns(ctx, sessionID, carryon.RunFilter{Limit: 1})
	if err != nil || len(page.Items) == 0 {
		return nil, err
	}
	return page.Items[0], nil
}

// clientCalls are the call ids of the client tool calls a run made (waiting or answered): a
// tool message answering one is an output for that run, also on a repeat, when the run no
// longer waits (SubmitToolOutputs answers a repeat as the first time).
func (h *Handler) clientCalls(ctx context.Context, run *carryon.Run) (map[string]bool, error) {
	out := map[string]bool{}
	if len(run.Tools) == 0 {
		return out, nil
	}
	acts, err := h.cfg.Runs.Actions(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	for _, a := range acts {
		if a.Executor == carryon.ExecutorClient {
			out[a.CallID] = true
		}
	}
	return out, nil
}

// patchState applies the input's state as a JSON merge patch on the working memory, under the
// run id's "#state" request id. A state that changes nothing writes nothing (a client sends its
// whole state back with every input), but an expected version is still checked.
func (h *Handler) patchState(ctx context.Context, sessionID string, in *runInput, expected *int64) error {
	cur, err := h.cfg.Sessions.GetWorkingMemory(ctx, sessionID)
	if err != nil {
		return err
	}
	before, _ := json.Marshal(cur.WorkingMemory)
	doc, _ := decodeDoc(before)
	patch, err := decodeDoc(in.State)
	if err != nil {
		return carryon.Errorf(carryon.EINVALID, "state is not JSON")
	}
	after := carryon.MergePatch(doc, patch)
	if sameJSON(after, mustDoc(before)) {
		if expected != nil && *expected != cur.Version {
			e := carryon.Errorf(carryon.EVERSION, "thread %s is at version %d, not %d", in.ThreadID, cur.Version, *expected)
			e.CurrentVersion = cur.Version
			return e
		}
		return nil
	}
	_, err = h.cfg.Sessions.PatchWorkingMemory(ctx, sessionID, carryon.WorkingMemoryPatch{Patch: in.State,
		WriteOptions: carryon.WriteOptions{RequestID: in.RunID + "#state", ExpectedVersion: expected}})
	return err
}

func mustDoc(b []byte) any { v, _ := decodeDoc(b); return v }

// BudgetInterrupt starts the id of the interrupt of a run stopped at a budget (the run id follows).
const BudgetInterrupt = "budget_"

// approval is a resume entry as carryon's decision: resolved approves (payload
// {"decision": "approve"|"reject", "arguments"?, "reason"?} may say otherwise), cancelled rejects.
func approval(e resumeEntry) (carryon.Approval, error) {
	a := carryon.Approval{ActionID: e.InterruptID, Decision: carryon.DecisionApprove}
	if e.Status == "cancelled" {
		a.Decision = carryon.DecisionReject
	}
	if len(e.Payload) > 0 && !isNull(e.Payload) {
		var pl struct {
			Decision  carryon.Decision `json:"decision"`
			Arguments json.RawMessage  `json:"arguments"`
			Reason    string           `json:"reason"`
		}
		if err := json.Unmarshal(e.Payload, &pl); err != nil {
			return a, carryon.Errorf(carryon.EINVALID, "resume[0].payload must be an object {decision?, arguments?, reason?}")
		}
		if pl.Decision != "" {
			a.Decision = pl.Decision
		}
		a.Arguments, a.Reason = pl.Arguments, pl.Reason
	}
	return a, nil
}

func clip(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}
