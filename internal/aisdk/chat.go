package aisdk

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/carryon-hub/carryon"
)

// chat answers a chat request. A last message from the user starts a run on the chat's session
// (created with the chat id as its external id when the caller has none); a last message from
// the assistant carries the client's tool results or approval responses for the run that waits
// for them. Either way the answer is the run's UI message stream.
func (h *Handler) chat(w http.ResponseWriter, r *http.Request) {
	req, err := decodeChat(r)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	last := req.Messages[len(req.Messages)-1]
	var run *carryon.Run
	from := int64(0)
	switch last.Role {
	case "user":
		run, err = h.submit(r, req, last)
	case "assistant":
		run, from, err = h.answer(r, req, last)
	default:
		err = invalid("the last message is a %s message: a chat request ends with the user's new message, or with the assistant message that holds tool results or approval responses", last.Role)
	}
	if err != nil {
		WriteError(w, r, err)
		return
	}
	h.stream(w, r, run, from)
}

// submit starts the run of the user's new message. The message's id makes the request id
// (unless an Idempotency-Key header gives one): the same message posted again streams the
// run it started, and starts nothing.
func (h *Handler) submit(r *http.Request, req *chatRequest, msg uiMessage) (*carryon.Run, error) {
	text, err := userText(msg)
	if err != nil {
		return nil, err
	}
	sess, created, err := h.session(r, req.ID, text, req.Agent)
	if err != nil {
		return nil, err
	}
	key := r.Header.Get("Idempotency-Key")
	if key == "" && msg.ID != "" {
		key = requestID(sess.ID, msg.ID)
	}
	run, err := h.runs.Start(r.Context(), sess.ID, carryon.NewRun{
		Message: text, Tools: req.clientTools(), Agent: req.Agent,
		WriteOptions: carryon.WriteOptions{RequestID: key},
	})
	if err != nil && created {
		// The session made for this request goes with the refusal, unless something was written
		// to it since (its version moved on): a refused chat leaves nothing behind.
		v := sess.Version
		_ = h.sessions.Delete(r.Context(), sess.ID, carryon.WriteOptions{ExpectedVersion: &v})
	}
	return run, err
}

// answer hands the tool outputs or the approval response in the assistant message to the run
// of the chat that waits for them, and returns the run and the seq of its first event after
// them: the stream goes on from there, as the client holds the message up to them.
func (h *Handler) answer(r *http.Request, req *chatRequest, msg uiMessage) (*carryon.Run, int64, error) {
	sess, err := h.find(r, req.ID)
	if err != nil {
		return nil, 0, err
	}
	run, err := h.activeRun(r, sess.ID)
	if err != nil {
		return nil, 0, err
	}
	if run == nil || !run.Status.Waiting() {
		return nil, 0, carryon.Errorf(carryon.ECONFLICT, "chat %q has no run waiting for tool results or an approval: send a user message, or resume the stream with GET %s/chat/{id}/stream", req.ID, Prefix)
	}
	from, err := h.lastSeq(r, run.ID)
	if err != nil {
		return nil, 0, err
	}
	parts := map[string]part{}
	for _, raw := range msg.Parts {
		p, _ := parsePart(raw, "")
		if p.ToolCallID != "" {
			parts[p.ToolCallID] = p
		}
	}
	key := r.Header.Get("Idempotency-Key")
	switch run.Status {
	case carryon.RunRequiresAction:
		var outs carryon.ToolOutputs
		for _, c := range run.RequiredAction.ToolCalls {
			p, ok := parts[c.CallID]
			switch {
			case !ok || p.State != "output-available" && p.State != "output-error":
				return nil, 0, invalid("the last message has no output for the call %s of client tool %s: add it with addToolOutput before sending", c.CallID, c.Name)
			case p.State == "output-error":
				outs.Outputs = append(outs.Outputs, carryon.ToolOutput{CallID: c.CallID, Output: "Error: " + p.ErrorText})
			default:
				outs.Outputs = append(outs.Outputs, carryon.ToolOutput{CallID: c.CallID, Output: outputText(p.Output)})
			}
		}
		if key == "" && len(outs.Outputs) > 0 {
			key = requestID(run.ID, outs.Outputs[0].CallID)
		}
		outs.RequestID = key
		run, err = h.runs.SubmitToolOutputs(r.Context(), run.ID, outs)
	case carryon.RunWaitingApproval:
		a := run.PendingAction
		if stop := run.BudgetStop; stop != nil {
			return nil, 0, carryon.Errorf(carryon.ECONFLICT, "the run of chat %q stopped at a budget (%s): %s", req.ID, stop.Error(), stop.GoOn(run.ID))
		}
		if a == nil {
			return nil, 0, carryon.Errorf(carryon.ECONFLICT, "the run of chat %q waits for a decision this door cannot make (a call a crash cut off): decide it on the native API", req.ID)
		}
		var decided *part
		for _, p := range parts {
			if p.Approval != nil && p.Approval.ID == a.ID && p.Approval.Approved != nil {
				decided = &p
				break
			}
		}
		if decided == nil {
			return nil, 0, invalid("the last message has no approval response for %s (tool %s, approval id %s): answer it with addToolApprovalResponse before sending", a.CallID, a.Tool, a.ID)
		}
		in := carryon.Approval{ActionID: a.ID, Decision: carryon.DecisionApprove}
		if !*decided.Approval.Approved {
			in.Decision, in.Reason = carryon.DecisionReject, decided.Approval.Reason
		}
		if key == "" {
			key = requestID(run.ID, a.ID)
		}
		in.RequestID = key
		run, err = h.runs.Approve(r.Context(), run.ID, in)
	}
	if err != nil {
		return nil, 0, err
	}
	return run, from + 1, nil
}

// session returns the chat's session, creating it (titled with the start of the first message)
// when the chat id is not a session id and names no session of the caller's yet; created says
// it did.
func (h *Handler) session(r *http.Request, chatID, text, agent string) (*carryon.Session, bool, error) {
	s, err := h.find(r, chatID)
	if err == nil || strings.HasPrefix(chatID, carryon.SessionIDPrefix) || carryon.ErrorCode(err) != carryon.ENOTFOUND {
		return s, false, err
	}
	s, err = h.sessions.Create(r.Context(), carryon.NewSession{ExternalID: chatID, Title: clip(text), TitleDerived: true, Agent: agent})
	return s, err == nil, err
}

// find returns the caller's session a chat id names: the session with that id (a session id,
// sess_…) or the one with that external id; ENOTFOUND, the same for another user's.
func (h *Handler) find(r *http.Request, chatID string) (*carryon.Session, error) {
	if strings.HasPrefix(chatID, carryon.SessionIDPrefix) {
		v, err := h.sessions.Get(r.Context(), chatID, carryon.GetOptions{Messages: -1})
		if carryon.ErrorCode(err) == carryon.ENOTFOUND {
			return nil, chatNotFound(chatID)
		}
		if err != nil {
			return nil, err
		}
		return &v.Session, nil
	}
	page, err := h.sessions.List(r.Context(), carryon.SessionFilter{ExternalID: chatID, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(page.Items) == 0 {
		return nil, chatNotFound(chatID)
	}
	return page.Items[0], nil
}

// activeRun returns the session's newest run when it is active, else nil.
func (h *Handler) activeRun(r *http.Request, sessionID string) (*carryon.Run, error) {
	page, err := h.runs.ListRuns(r.Context(), sessionID, carryon.RunFilter{Limit: 1})
	if err != nil || len(page.Items) == 0 || !page.Items[0].Status.Active() {
		return nil, err
	}
	return page.Items[0], nil
}

// lastSeq is the seq of the run's last stored event.
func (h *Handler) lastSeq(r *http.Request, runID string) (int64, error) {
	events, err := h.runs.Events(r.Context(), runID, 0, false)
	if err != nil {
		return 0, err
	}
	defer events.Close()
	var last int64
	for {
		e, ok, err := events.Next()
		if err != nil || !ok {
			return last, err
		}
		last = e.Seq
	}
}

// requestID is the request id of a write this door derives from the ids the AI SDK sends
// (the chat's session and the message, the run and the call or action), so that the same
// request repeated makes the write once; at most carryon.MaxRequestIDLength bytes.
func requestID(scope, id string) string {
	key := "ai-sdk/" + scope + "/" + id
	if len(key) > carryon.MaxRequestIDLength {
		key = key[:carryon.MaxRequestIDLength]
		for !utf8.ValidString(key) {
			key = key[:len(key)-1]
		}
	}
	return key
}

// clip is the start of a first message, as the session's title.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= 80 {
		return s
	}
	return string([]rune(s)[:79]) + "…"
}
