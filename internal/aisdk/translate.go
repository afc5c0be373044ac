package aisdk

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/carryon-hub/carryon"
)

// translator derives a run's UI message stream (the AI SDK's UI message chunks) from the run's
// stored events, in order and from nothing else, so that the same events give the same chunks
// with the same ids on every instance and at every resume:
//
//   - run.queued → start, with the run id as the message id;
//   - model.delta → text-start at a step's first text, then text-delta. A runner that took the
//     run over after a crash calls the model again for the step: deltas that repeat text
//     already sent are not sent again, so a resumed stream holds the text once; should the new
//     call say something else, the text part so far ends and a new one starts;
//   - message.appended: the assistant's message ends its text part (text-end, after a delta of
//     any committed text not streamed), and each tool call it makes is tool-input-start,
//     tool-input-delta and tool-input-available (a client tool's as a static tool part, whose
//     output the client sends); a tool result message is tool-output-available for its call;
//   - tool.started of carryon's own tool → its input, as a dynamic, provider-executed part (not
//     at the message: a call waiting for its turn must not look like one waiting for the page);
//     tool.finished → tool-output-available, or tool-output-error (or tool-output-denied);
//   - memory.updated → data-working-memory (id working-memory: the client keeps one, the latest);
//   - start-step before a step's first part, finish-step after its answer or its tool results;
//   - run.waiting_approval → tool-approval-request (approval id = the action id), then finish
//     (tool-calls); run.requires_action → finish (tool-calls). Such a finish is sent only when
//     the stream ends there: a run that went on (run.approved, run.tool_outputs) continues the
//     same message; a rejected call is tool-output-denied; a run stopped at a budget is
//     data-budget-stop {budget_stop, message}, then finish (other), continued the same way;
//   - run.finished → finish (stop) when the run succeeded, abort when it was cancelled or
//     interrupted; run.failed → error with the run's error.
//
// Each chunk carries the seq of the stored event it came from (pos), so that a stream can leave
// out what the client holds already (the part of the message before a tool output).
type translator struct {
	runID    string
	clientFn map[string]bool

	pos     int64 // seq of the last stored event fed
	chunks  []chunk
	texts   int // text parts so far (ids)
	text    *textPart
	step    bool // a step is open
	shown   map[string]bool
	outputs map[string]bool
	server  map[string]bool // call ids of carryon's own tools
	ended   bool
	paused  bool
	pending []map[string]any // the finish of a pause, sent if the stream ends there
}

// chunk is one UI message chunk and the seq of the event it came from.
type chunk struct {
	pos  int64
	body map[string]any
}

// textPart is the text part being streamed.
type textPart struct {
	id      string
	sent    string // the text sent as deltas
	attempt string // the text of this model call so far
}

// newTranslator returns the translator of run.
func newTranslator(run *carryon.Run) *translator {
	t := &translator{runID: run.ID, clientFn: map[string]bool{}, shown: map[string]bool{}, outputs: map[string]bool{}, server: map[string]bool{}}
	for _, ct := range run.Tools {
		t.clientFn[ct.Name] = true
	}
	return t
}

// emit adds a chunk.
func (t *translator) emit(typ string, body map[string]any) {
	body["type"] = typ
	t.chunks = append(t.chunks, chunk{pos: t.pos, body: body})
}

// take returns the chunks made since the last take.
func (t *translator) take() []chunk {
	out := t.chunks
	t.chunks = nil
	return out
}

// startStep opens a step unless one is open.
func (t *translator) startStep() {
	if !t.step {
		t.step = true
		t.emit("start-step", map[string]any{})
	}
}

// endStep closes the open text part and the open step.
func (t *translator) endStep() {
	t.closeText()
	if t.step {
		t.step = false
		t.emit("finish-step", map[string]any{})
	}
}

// feed reads the run's next event (a stored one, or a preview of a delta with seq 0).
func (t *translator) feed(e *carryon.Event) {
	if e.Seq > 0 {
		t.pos = e.Seq
	}
	if t.ended {
		return
	}
	if t.paused && e.Type != carryon.EventRunWaiting && e.Type != carryon.EventRunRequiresAction {
		t.paused, t.pending = false, nil // the run went on: the same message continues
	}
	var data map[string]json.RawMessage
	_ = json.Unmarshal(e.Data, &data)
	switch e.Type {
	case carryon.EventRunQueued:
		if e.Seq == 1 {
			t.emit("start", map[string]any{"messageId": t.runID})
		}
	case carryon.EventRunStarted:
		if t.text != nil {
			t.text.attempt = "" // a new attempt calls the model again for the step
		}
	case carryon.EventModelDelta:
		var text string
		_ = json.Unmarshal(data["text"], &text)
		t.delta(text)
	case carryon.EventMessageAppended:
		var res carryon.AppendResult
		if json.Unmarshal(e.Data, &res) == nil {
			t.messages(res.Messages)
		}
	case carryon.EventToolStarted:
		var a carryon.Action
		if json.Unmarshal(e.Data, &a) == nil {
			t.input(a.CallID, a.Tool, a.Args)
		}
	case carryon.EventToolFinished:
		var a carryon.Action
		if json.Unmarshal(e.Data, &a) == nil {
			t.actionOutput(&a)
		}
	case carryon.EventWorkingMemoryUpdated:
		t.emit("data-working-memory", map[string]any{"id": "working-memory", "data": json.RawMessage(orNull(e.Data))})
	case carryon.EventRunWaiting:
		var stop carryon.BudgetStop
		if json.Unmarshal(data["budget"], &stop) == nil && stop.Reason != "" {
			// A budget stop: the message ends for now (finish reason other), saying why and how it
			// goes on; an approval on the native API continues the same message.
			t.endStep()
			t.emit("data-budget-stop", map[string]any{"id": "budget-stop", "data": map[string]any{
				"budget_stop": stop, "message": stop.Error() + ": " + stop.GoOn(t.runID)}})
			t.paused = true
			t.pending = []map[string]any{{"type": "finish", "finishReason": "other"}}
			break
		}
		var a carryon.Action
		if json.Unmarshal(data["action"], &a) == nil && a.ID != "" {
			t.input(a.CallID, a.Tool, a.Args)
			t.emit("tool-approval-request", map[string]any{"approvalId": a.ID, "toolCallId": a.CallID})
		}
		t.pause()
	case carryon.EventRunApproved:
		var d struct {
			Decision carryon.Decision `json:"decision"`
			Action   carryon.Action   `json:"action"`
		}
		_ = json.Unmarshal(e.Data, &d)
		if d.Decision == carryon.DecisionReject && t.shown[d.Action.CallID] && !t.outputs[d.Action.CallID] {
			t.outputs[d.Action.CallID] = true
			t.emit("tool-output-denied", map[string]any{"toolCallId": d.Action.CallID})
		}
	case carryon.EventRunRequiresAction:
		t.pause()
	case carryon.EventRunFinished:
		var d struct {
			Status carryon.RunStatus `json:"status"`
			Error  string            `json:"error"`
		}
		_ = json.Unmarshal(e.Data, &d)
		t.endStep()
		if d.Status == carryon.RunSucceeded {
			t.emit("finish", map[string]any{"finishReason": "stop"})
		} else {
			t.emit("abort", map[string]any{"reason": "the run was " + string(d.Status)})
		}
		t.ended = true
	case carryon.EventRunFailed:
		var msg string
		_ = json.Unmarshal(data["error"], &msg)
		if msg == "" {
			msg = "the run failed"
		}
		t.endStep()
		t.emit("error", map[string]any{"errorText": msg})
		t.ended = true
	}
}

// pause ends the step at a stop for the client (tool outputs, an approval); the finish that
// says so waits in pending for the stream's end.
func (t *translator) pause() {
	t.endStep()
	t.paused = true
	t.pending = []map[string]any{{"type": "finish", "finishReason": "tool-calls"}}
}

// delta streams model text.
func (t *translator) delta(text string) {
	if text == "" {
		return
	}
	if t.text == nil {
		t.openText()
	}
	it := t.text
	it.attempt += text
	switch {
	case strings.HasPrefix(it.sent, it.attempt):
		return // the same text again, already sent
	case strings.HasPrefix(it.attempt, it.sent):
	default:
		// The model said something else this time: what was sent stays a part of its own.
		again := it.attempt
		t.closeText()
		t.openText()
		it = t.text
		it.attempt = again
	}
	d := it.attempt[len(it.sent):]
	it.sent = it.attempt
	t.emit("text-delta", map[string]any{"id": it.id, "delta": d})
}

// openText starts a text part.
func (t *translator) openText() {
	t.startStep()
	t.texts++
	t.text = &textPart{id: "text-" + strconv.Itoa(t.texts)}
	t.emit("text-start", map[string]any{"id": t.text.id})
}

// closeText ends the open text part.
func (t *translator) closeText() {
	if t.text == nil {
		return
	}
	t.emit("text-end", map[string]any{"id": t.text.id})
	t.text = nil
}

// messages reads the messages the run stored.
func (t *translator) messages(msgs []*carryon.Message) {
	results := false
	for _, m := range msgs {
		switch {
		case m.Kind == carryon.KindSummary:
		case m.Role == carryon.RoleAssistant && m.Deleted:
			t.closeText() // deleted since: its text is redacted in the events too
		case m.Role == carryon.RoleAssistant:
			t.assistant(m)
		case m.Role == carryon.RoleTool && m.ToolCallID != "":
			results = true
			if t.shown[m.ToolCallID] && !t.outputs[m.ToolCallID] {
				t.outputs[m.ToolCallID] = true
				t.emit("tool-output-available", t.toolFields(m.ToolCallID, map[string]any{"toolCallId": m.ToolCallID, "output": m.Content}))
			}
		}
	}
	if results {
		t.endStep()
	}
}

// assistant reads an assistant message: its committed text, then its tool calls.
func (t *translator) assistant(m *carryon.Message) {
	if m.Content != "" {
		switch {
		case t.text == nil:
			t.openText()
			t.text.sent = m.Content
			t.emit("text-delta", map[string]any{"id": t.text.id, "delta": m.Content})
		case strings.HasPrefix(m.Content, t.text.sent):
			if rest := m.Content[len(t.text.sent):]; rest != "" {
				t.text.sent = m.Content
				t.emit("text-delta", map[string]any{"id": t.text.id, "delta": rest})
			}
		default:
			t.closeText()
			t.openText()
			t.text.sent = m.Content
			t.emit("text-delta", map[string]any{"id": t.text.id, "delta": m.Content})
		}
	}
	t.closeText()
	var calls []carryon.ToolCall
	_ = json.Unmarshal(m.ToolCalls, &calls)
	for _, c := range calls {
		// A call of carryon's own tool shows when it starts, or waits for an approval: the AI SDK
		// takes a step's tool parts without output, still to come, for calls waiting for the page
		// (lastAssistantMessageIsCompleteWithApprovalResponses), and carryon asks one approval at
		// a time.
		if t.clientFn[c.Name] {
			t.input(c.ID, c.Name, c.Arguments)
		}
	}
	if len(calls) == 0 {
		t.endStep()
	}
}

// input shows a tool call's input, once.
func (t *translator) input(callID, name string, args json.RawMessage) {
	if callID == "" || t.shown[callID] {
		return
	}
	t.shown[callID] = true
	if !t.clientFn[name] {
		t.server[callID] = true
	}
	t.startStep()
	t.closeText()
	text := string(args)
	if text == "" {
		text = "{}"
	}
	var input any = json.RawMessage(text)
	if !json.Valid(args) {
		input = text
	}
	t.emit("tool-input-start", t.toolFields(callID, map[string]any{"toolCallId": callID, "toolName": name}))
	t.emit("tool-input-delta", map[string]any{"toolCallId": callID, "inputTextDelta": text})
	t.emit("tool-input-available", t.toolFields(callID, map[string]any{"toolCallId": callID, "toolName": name, "input": input}))
}

// toolFields marks a chunk of a call of carryon's own tool as dynamic and provider-executed:
// the client neither knows nor runs it.
func (t *translator) toolFields(callID string, body map[string]any) map[string]any {
	if t.server[callID] {
		body["dynamic"], body["providerExecuted"] = true, true
	}
	return body
}

// actionOutput shows the outcome of carryon's tool call, once.
func (t *translator) actionOutput(a *carryon.Action) {
	if t.outputs[a.CallID] || a.Executor == carryon.ExecutorClient {
		return
	}
	t.input(a.CallID, a.Tool, a.Args)
	t.outputs[a.CallID] = true
	switch {
	case a.Approval == carryon.ApprovalRejected || a.Status == carryon.ActionSkipped:
		t.emit("tool-output-denied", map[string]any{"toolCallId": a.CallID})
	case a.Status == carryon.ActionFailed || a.Status == carryon.ActionUnknown:
		msg := a.Error
		if msg == "" {
			msg = "the tool call " + string(a.Status)
		}
		t.emit("tool-output-error", t.toolFields(a.CallID, map[string]any{"toolCallId": a.CallID, "errorText": msg}))
	default:
		t.emit("tool-output-available", t.toolFields(a.CallID, map[string]any{"toolCallId": a.CallID, "output": a.Result}))
	}
}

// orNull is data, or JSON null when empty.
func orNull(data json.RawMessage) json.RawMessage {
	if len(data) == 0 {
		return json.RawMessage("null")
	}
	return data
}
