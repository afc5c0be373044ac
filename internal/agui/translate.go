package agui

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/carryon-hub/carryon"
)

// translator derives AG-UI events from a carryon run's stored events, in order and from nothing
// else:
//
//   - the events before the AG-UI run's start (the outputs or decision it sent) are read, not
//     sent;
//   - model.delta → TEXT_MESSAGE_START (id "<run id>:<step>") at the step's first text, then
//     TEXT_MESSAGE_CONTENT; a new attempt that repeats the text sends nothing again, one that
//     says something else ends the message and starts another;
//   - message.appended of the run's assistant message → TEXT_MESSAGE_END (or the whole text
//     message when nothing was streamed), then TOOL_CALL_START, TOOL_CALL_ARGS (the arguments
//     in one delta) and TOOL_CALL_END per call; of a tool message of carryon's own tools →
//     TOOL_CALL_RESULT;
//   - memory.updated → STATE_DELTA, the JSON Patch from the document sent so far to the stored
//     one;
//   - tool.started / tool.finished → STEP_STARTED / STEP_FINISHED named after the tool and call;
//   - run.requires_action → RUN_FINISHED (success, pendingToolCallIds); run.waiting_approval →
//     RUN_FINISHED with an interrupt outcome, one interrupt per waiting action (its id);
//     run.finished → RUN_FINISHED (success, or cancelled); run.failed → RUN_ERROR.
type translator struct {
	threadID, runID, sessionID string
	run                        *carryon.Run
	st                         start
	doc                        any
	client                     map[string]bool // client tool names
	mine                       bool            // the AG-UI run has begun
	done                       bool
	last                       map[string]any // RUN_FINISHED or RUN_ERROR
	text                       *streamText
	restarts                   map[int]int
	steps                      map[string]bool // open steps
	out                        []map[string]any
}

// streamText is the text message being streamed.
type streamText struct {
	id      string
	step    int
	sent    string // the text sent
	attempt string // the text of this model call so far
}

func newTranslator(threadID, runID, sessionID string, run *carryon.Run, st start, doc any) *translator {
	t := &translator{threadID: threadID, runID: runID, sessionID: sessionID, run: run, st: st, doc: doc,
		client: map[string]bool{}, restarts: map[int]int{}, steps: map[string]bool{}}
	for _, ct := range run.Tools {
		t.client[ct.Name] = true
	}
	return t
}

func (t *translator) emit(ev map[string]any) { t.out = append(t.out, ev) }

func (t *translator) flush(send func(map[string]any) error) error {
	for _, ev := range t.out {
		if err := send(ev); err != nil {
			return err
		}
	}
	t.out = nil
	return nil
}

// begins reports whether e is the event the AG-UI run starts at.
func (t *translator) begins(e *carryon.Event) bool {
	switch {
	case t.st.actionID != "":
		if e.Type != carryon.EventRunApproved {
			return false
		}
		var d struct {
			Action struct {
				ID string `json:"id"`
			} `json:"action"`
			ActionID string `json:"action_id"`
		}
		_ = json.Unmarshal(e.Data, &d)
		return d.Action.ID == t.st.actionID || d.ActionID == t.st.actionID
	case len(t.st.callIDs) > 0:
		if e.Type != carryon.EventToolOutputs {
			return false
		}
		var d struct {
			CallIDs []string `json:"call_ids"`
		}
		_ = json.Unmarshal(e.Data, &d)
		return slices.Contains(d.CallIDs, t.st.callIDs[0])
	}
	return e.Type == carryon.EventRunQueued
}

// feed reads the run's next event.
func (t *translator) feed(e *carryon.Event) {
	if !t.mine {
		t.mine = t.begins(e)
		return
	}
	var data map[string]json.RawMessage
	_ = json.Unmarshal(e.Data, &data)
	switch e.Type {
	case carryon.EventRunStarted:
		if t.text != nil {
			t.text.attempt = "" // a new attempt calls the model again for the step
		}
	case carryon.EventModelDelta:
		var d struct {
			Step int    `json:"step"`
			Text string `json:"text"`
		}
		_ = json.Unmarshal(e.Data, &d)
		t.delta(d.Step, d.Text)
	case carryon.EventMessageAppended:
		var res carryon.AppendResult
		if json.Unmarshal(e.Data, &res) == nil {
			for _, m := range res.Messages {
				if m.RunID == t.run.ID {
					t.message(m)
				}
			}
		}
	case carryon.EventWorkingMemoryUpdated:
		if doc, err := decodeDoc(e.Data); err == nil {
			if ops := diff(t.doc, doc); len(ops) > 0 {
				t.emit(map[string]any{"type": "STATE_DELTA", "delta": ops})
			}
			t.doc = doc
		}
	case carryon.EventToolStarted, carryon.EventToolFinished:
		var a carryon.Action
		if json.Unmarshal(e.Data, &a) == nil && a.Executor != carryon.ExecutorClient {
			name := a.Tool + " " + a.CallID
			if e.Type == carryon.EventToolStarted && !t.steps[name] {
				t.steps[name] = true
				t.emit(map[string]any{"type": "STEP_STARTED", "stepName": name})
			} else if e.Type == carryon.EventToolFinished && t.steps[name] {
				delete(t.steps, name)
				t.emit(map[string]any{"type": "STEP_FINISHED", "stepName": name})
			}
		}
	case carryon.EventRunRequiresAction:
		var ra carryon.RequiredAction
		_ = json.Unmarshal(data["required_action"], &ra)
		ids := []string{}
		for _, c := range ra.ToolCalls {
			ids = append(ids, c.CallID)
		}
		t.finish(map[string]any{"type": "success", "pendingToolCallIds": ids}, nil)
	case carryon.EventRunWaiting:
		var stop carryon.BudgetStop
		if json.Unmarshal(data["budget"], &stop) == nil && stop.Reason != "" {
			t.finish(map[string]any{"type": "interrupt", "interrupts": []any{map[string]any{
				"id": BudgetInterrupt + t.run.ID, "reason": carryon.ReasonBudgetExceeded,
				"message":  stop.Error() + ": " + stop.GoOn(t.run.ID) + " (or resume this interrupt once the budget is raised)",
				"metadata": map[string]any{"budget_stop": stop, "run_id": t.run.ID}}}}, nil)
			return
		}
		var a carryon.Action
		_ = json.Unmarshal(data["action"], &a)
		in := map[string]any{"id": a.ID, "reason": "tool_approval",
			"message":  fmt.Sprintf("the tool %s waits for a decision before it runs with %s", a.Tool, argsText(a.Args)),
			"metadata": map[string]any{"tool": a.Tool, "arguments": json.RawMessage(nonEmpty(a.Args)), "run_id": t.run.ID}}
		if a.CallID != "" {
			in["toolCallId"] = a.CallID
		}
		t.finish(map[string]any{"type": "interrupt", "interrupts": []any{in}}, nil)
	case carryon.EventRunFinished:
		var d struct {
			Status carryon.RunStatus `json:"status"`
			Reply  string            `json:"reply"`
		}
		_ = json.Unmarshal(e.Data, &d)
		if d.Status == carryon.RunSucceeded {
			t.finish(map[string]any{"type": "success"}, nil)
		} else {
			t.finish(map[string]any{"type": "cancelled"}, nil)
		}
	case carryon.EventRunFailed:
		var d struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(e.Data, &d)
		if d.Error == "" {
			d.Error = "the run failed"
		}
		t.finish(nil, map[string]any{"type": "RUN_ERROR", "message": d.Error, "code": "run_failed"})
	}
}

// finish ends the AG-UI run: open messages and steps are closed, and its last event is kept for
// after MESSAGES_SNAPSHOT.
func (t *translator) finish(outcome map[string]any, runErr map[string]any) {
	t.closeText("")
	names := make([]string, 0, len(t.steps))
	for n := range t.steps {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		t.emit(map[string]any{"type": "STEP_FINISHED", "stepName": n})
	}
	t.steps = map[string]bool{}
	t.done = true
	if runErr != nil {
		t.last = runErr
		return
	}
	t.last = map[string]any{"type": "RUN_FINISHED", "threadId": t.threadID, "runId": t.runID, "outcome": outcome}
}

// delta streams model text of a step.
func (t *translator) delta(step int, text string) {
	if t.text != nil && t.text.step != step {
		t.closeText("")
	}
	if t.text == nil {
		t.openText(step)
	}
	s := t.text
	s.attempt += text
	switch {
	case strings.HasPrefix(s.sent, s.attempt):
		return // the same text again, already sent
	case strings.HasPrefix(s.attempt, s.sent):
	default:
		again := s.attempt
		t.closeText("")
		t.restarts[step]++
		t.openText(step)
		s = t.text
		s.attempt = again
	}
	d := s.attempt[len(s.sent):]
	s.sent = s.attempt
	if d != "" {
		t.emit(map[string]any{"type": "TEXT_MESSAGE_CONTENT", "messageId": s.id, "delta": d})
	}
}

func (t *translator) openText(step int) {
	t.text = &streamText{id: streamedID(t.run.ID, step, t.restarts[step]), step: step}
	t.emit(map[string]any{"type": "TEXT_MESSAGE_START", "messageId": t.text.id, "role": "assistant"})
}

// closeText ends the text message being streamed, after the rest of final (the committed text)
// when it goes on from what was sent.
func (t *translator) closeText(final string) {
	if t.text == nil {
		return
	}
	if rest, ok := strings.CutPrefix(final, t.text.sent); ok && rest != "" {
		t.emit(map[string]any{"type": "TEXT_MESSAGE_CONTENT", "messageId": t.text.id, "delta": rest})
	}
	t.emit(map[string]any{"type": "TEXT_MESSAGE_END", "messageId": t.text.id})
	t.text = nil
}

// message translates a stored message of the run.
func (t *translator) message(m *carryon.Message) {
	switch m.Role {
	case carryon.RoleAssistant:
		parent := storedID(t.sessionID, m.Seq)
		if t.text != nil {
			parent = t.text.id
			t.closeText(m.Content)
		} else if m.Content != "" {
			t.emit(map[string]any{"type": "TEXT_MESSAGE_START", "messageId": parent, "role": "assistant"})
			t.emit(map[string]any{"type": "TEXT_MESSAGE_CONTENT", "messageId": parent, "delta": m.Content})
			t.emit(map[string]any{"type": "TEXT_MESSAGE_END", "messageId": parent})
		}
		for _, c := range toolCallsOf(m) {
			t.emit(map[string]any{"type": "TOOL_CALL_START", "toolCallId": c.ID, "toolCallName": c.Name, "parentMessageId": parent})
			t.emit(map[string]any{"type": "TOOL_CALL_ARGS", "toolCallId": c.ID, "delta": argsText(c.Arguments)})
			t.emit(map[string]any{"type": "TOOL_CALL_END", "toolCallId": c.ID})
		}
	case carryon.RoleTool:
		if t.client[m.Name] || t.isClientCall(m.ToolCallID) {
			return // the client's own result, which it has
		}
		t.emit(map[string]any{"type": "TOOL_CALL_RESULT", "messageId": storedID(t.sessionID, m.Seq), "toolCallId": m.ToolCallID, "content": m.Content, "role": "tool"})
	}
}

// isClientCall reports whether a call id is one the AG-UI run's input answered.
func (t *translator) isClientCall(id string) bool { return slices.Contains(t.st.callIDs, id) }

func nonEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}
