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

// run serves one RunAgentInput: it resolves the thread, writes the input (state, then one of: a
// new run with the new messages, the outputs a waiting run asked for, the decision an
// interrupted run waits for), and streams the run. Every refusal before the stream is an HTTP
// error; nothing is written before the input passed its checks.
func (h *Handler) run(w http.ResponseWriter, r *http.Request) {
	in, err := decodeInput(r)
	if err != nil {
		writeError(w, err)
		return
	}
	p, err := props(in.ForwardedProps)
	if err != nil {
		writeError(w, err)
		return
	}
	tools, err := clientTools(in.Tools)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx := r.Context()
	sess, err := h.thread(ctx, in)
	if err != nil {
		writeError(w, err)
		return
	}
	var fresh []message
	for _, m := range in.Messages {
		if !known(sess.ID, m.ID) {
			fresh = append(fresh, m)
		}
	}
	st, err := h.write(ctx, sess, in, p, tools, fresh)
	if err != nil {
		writeError(w, err)
		return
	}
	h.stream(w, r, in, sess.ID, st)
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
// session with that external id, made now when there is none.
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
	title := ""
	for _, m := range in.Messages {
		if m.Role == "user" {
			title, _ = textOf(m.Content, "")
		}
	}
	return h.cfg.Sessions.Create(ctx, carryon.NewSession{ExternalID: in.ThreadID, Title: clip(title), TitleDerived: title != ""})
}

// write makes the input's writes and returns where the stream begins.
func (h *Handler) write(ctx context.Context, sess *carryon.Session, in *runInput, p carryonProps, tools []carryon.ClientTool, fresh []message) (start, error) {
	// What the input asks for, decided from the input alone (the same on a repeat).
	var outputs []carryon.ToolOutput
	var msgs []carryon.NewMessage
	for _, m := range fresh {
		nm, skip := newMessage(m)
		if skip {
			continue
		}
		msgs = append(msgs, nm)
	}
	if len(msgs) > carryon.MaxAppendMessages {
		return start{}, carryon.Errorf(carryon.EINVALID, "the input has %d new messages; at most %d are taken at once (as POST /v1/sessions/{id}/messages)", len(msgs), carryon.MaxAppendMessages)
	}
	latest, err := h.latestRun(ctx, sess.ID)
	if err != nil {
		return start{}, err
	}
	if latest != nil && len(in.Resume) == 0 {
		clientCalls, err := h.clientCalls(ctx, latest)
		if err != nil {
			return start{}, err
		}
		var keep []carryon.NewMessage
		for _, m := range msgs {
			if m.Role == carryon.RoleTool && clientCalls[m.ToolCallID] {
				outputs = append(outputs, carryon.ToolOutput{CallID: m.ToolCallID, Output: m.Content})
				continue
			}
			keep = append(keep, m)
		}
		if len(outputs) > 0 && len(keep) > 0 {
			return start{}, carryon.Errorf(carryon.EINVALID, "the input answers the client tool calls of run %s and has other new messages too: send the tool results alone, the other messages with the next input", latest.ID)
		}
		msgs = keep
	}
	state := len(in.State) > 0 && !isNull(in.State)
	expected := p.ExpectedVersion
	if state && !h.used(ctx, in.RunID) {
		if err := h.patchState(ctx, sess.ID, in, expected); err != nil {
			return start{}, err
		}
		expected = nil // checked by the state's write
	}
	opts := carryon.RetryOptions{RequestID: in.RunID}
	switch {
	case len(in.Resume) > 0:
		if len(msgs) > 0 {
			return start{}, carryon.Errorf(carryon.EINVALID, "the input answers an interrupt and has new messages too: send the resume entry alone, the messages with the next input")
		}
		if latest == nil {
			return start{}, carryon.Errorf(carryon.ECONFLICT, "thread %s has no run waiting for a decision", in.ThreadID)
		}
		a, err := approval(in.Resume[0])
		if err != nil {
			return start{}, err
		}
		a.RetryOptions = opts
		if _, err := h.cfg.Runs.Approve(ctx, latest.ID, a); err != nil {
			return start{}, err
		}
		return start{runID: latest.ID, actionID: a.ActionID}, nil
	case len(outputs) > 0:
		if _, err := h.cfg.Runs.SubmitToolOutputs(ctx, latest.ID, carryon.ToolOutputs{Outputs: outputs, RetryOptions: opts}); err != nil {
			return start{}, err
		}
		ids := make([]string, len(outputs))
		for i, o := range outputs {
			ids[i] = o.CallID
		}
		return start{runID: latest.ID, callIDs: ids}, nil
	}
	if len(msgs) == 0 {
		return start{}, carryon.Errorf(carryon.EINVALID, "the input has no new message to run on: every message in it is carryon's already (ids %q…), or it is empty", sess.ID+":")
	}
	last := msgs[len(msgs)-1]
	nr := carryon.NewRun{Tools: tools, Agent: p.Agent, Multitask: carryon.MultitaskReject,
		WriteOptions: carryon.WriteOptions{RequestID: in.RunID, ExpectedVersion: expected}}
	switch last.Role {
	case carryon.RoleUser:
		nr.Message, nr.Input = last.Content, msgs[:len(msgs)-1]
	case carryon.RoleTool:
		nr.Input = msgs // the run continues after the tool's output
	default:
		return start{}, carryon.Errorf(carryon.EINVALID, "the new messages end with a %s message: a run starts on a user's message (or continues after a tool message)", last.Role)
	}
	if len(nr.Input) == 0 {
		nr.Input = nil
	}
	run, err := h.cfg.Runs.Start(ctx, sess.ID, nr)
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

// approval is a resume entry as carryon's decision: resolved approves (payload
// {"decision": "approve"|"reject", "arguments"?, "reason"?} may say otherwise), cancelled rejects.
func approval(e resumeEntry) (carryon.Approval, error) {
	a := carryon.Approval{ActionID: e.InterruptID, Decision: carryon.DecisionApprove}
	if e.Status == "cancelled" {
		a.Decision = carryon.DecisionReject
	}
	if len(e.Payload) > 0 && !isNull(e.Payload) {
		var pl struct {
			Decision  string          `json:"decision"`
			Arguments json.RawMessage `json:"arguments"`
			Reason    string          `json:"reason"`
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
