package openaiapi

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/carryon-hub/carryon"
)

// A response is a part of a run: a segment. Segment 0 runs from the run's start to the first
// time it stops for the client's tool outputs (run.requires_action), or to its end; segment k
// starts when the outputs of the k-th stop came (run.tool_outputs) and ends likewise. Segment
// 0's response id is the run id, segment k's is the run id, "_" and k (run ids are base32, so
// the "_" is unambiguous).
//
// translator derives a segment's stream events (the specification's ResponseStreamEvent types,
// no other) and its Response object from the run's stored events, in order and nothing else, so
// the same events give the same stream with the same sequence numbers on every instance and at
// every resume:
//
//   - run.queued (segment 0) or run.tool_outputs (segment k) → response.created (status queued);
//   - the segment's first run.started → response.in_progress;
//   - model.delta → an assistant message item: output_item.added and content_part.added at the
//     step's first delta, then output_text.delta. A runner that took the run over after a crash
//     calls the model again for the step: deltas that repeat text already sent are not sent
//     again, so a client that resumes sees the text once. Should the new call say something
//     else, the item sent so far is closed as incomplete and a new one starts;
//   - message.appended of the run's assistant message → its text item done (output_text.done,
//     content_part.done, output_item.done with the committed text), and a function_call item
//     per call of a client tool (added, function_call_arguments.delta and .done, done);
//     carryon's own tool calls are not items;
//   - message.appended of the run's automatic compaction (its summary, stored under the step's
//     request id RUN_ID/STEP/compact) → a compaction item (output_item.added and .done), whose
//     encrypted_content continues the compacted conversation when sent back as input;
//   - run.requires_action → response.completed; run.finished → response.completed (succeeded)
//     or response.incomplete with status cancelled (cancelled, interrupted); run.failed →
//     response.failed with the error.
type translator struct {
	runID    string
	segment  int // the segment whose events are made
	record   responseRecord
	run      *carryon.Run
	clientFn map[string]bool
	// compaction is the compaction item of a compaction stored at a seq of a session of an owner.
	compaction func(owner, sessionID string, seq int64) map[string]any

	cur       int // the segment of the event being read
	seq       int64
	events    []streamEvent
	resp      response
	started   bool // response.in_progress was sent for the segment
	ended     bool
	outputs   []string // the call ids whose outputs started the segment (segment > 0)
	paused    bool     // the segment waits for a user's decision on an action (waiting_approval)
	budget    bool     // the segment ended incomplete at a budget stop, until an approval continues it
	items     int      // items made in the run so far (ids)
	open      *textItem
	usageBase carryon.Usage
	lastVer   int64 // the session version after the run's last message
}

// textItem is the assistant message item being streamed.
type textItem struct {
	index   int // output_index
	id      string
	sent    string // the text sent as deltas
	attempt string // the text of this model call so far
}

// streamEvent is one event of a response stream.
type streamEvent struct {
	Type string
	Seq  int64
	Body map[string]any
}

// newTranslator returns the translator of the segment of run.
func newTranslator(run *carryon.Run, segment int) *translator {
	t := &translator{runID: run.ID, segment: segment, run: run, clientFn: map[string]bool{}}
	for _, ct := range run.Tools {
		t.clientFn[ct.Name] = true
	}
	return t
}

// responseID is the id of a segment of run runID.
func responseID(runID string, segment int) string {
	if segment == 0 {
		return runID
	}
	return runID + "_" + strconv.Itoa(segment)
}

// parseResponseID returns the run and segment a response id names.
func parseResponseID(id string) (string, int, bool) {
	if !strings.HasPrefix(id, "run_") {
		return "", 0, false
	}
	head, tail, cut := strings.Cut(strings.TrimPrefix(id, "run_"), "_")
	if !cut {
		if head == "" {
			return "", 0, false
		}
		return id, 0, true
	}
	k, err := strconv.Atoi(tail)
	if err != nil || k < 1 || strconv.Itoa(k) != tail || head == "" {
		return "", 0, false
	}
	return "run_" + head, k, true
}

// itemToken is the part of the run id the run's output item ids carry.
func (t *translator) itemID(prefix string) string {
	t.items++
	return prefix + "_" + strings.TrimPrefix(t.runID, "run_") + "_" + strconv.Itoa(t.items)
}

// mine reports whether the event being read belongs to the segment whose events are made.
func (t *translator) mine() bool { return t.cur == t.segment && !t.ended }

// emit adds an event of the segment.
func (t *translator) emit(typ string, body map[string]any) {
	if !t.mine() {
		return
	}
	body["type"] = typ
	body["sequence_number"] = t.seq
	t.events = append(t.events, streamEvent{Type: typ, Seq: t.seq, Body: body})
	t.seq++
}

// take returns the events made since the last take.
func (t *translator) take() []streamEvent {
	out := t.events
	t.events = nil
	return out
}

// feed reads the run's next stored event.
func (t *translator) feed(e *carryon.Event) {
	var data map[string]json.RawMessage
	_ = json.Unmarshal(e.Data, &data)
	switch e.Type {
	case carryon.EventRunQueued:
		if e.Seq > 1 {
			return
		}
		var meta struct {
			Response responseRecord `json:"openai_response"`
		}
		_ = json.Unmarshal(data["metadata"], &meta)
		t.record = meta.Response
		t.begin(e)
	case carryon.EventToolOutputs:
		t.closeText("incomplete")
		t.cur++
		if t.cur == t.segment {
			var d struct {
				CallIDs []string `json:"call_ids"`
			}
			_ = json.Unmarshal(e.Data, &d)
			t.outputs = d.CallIDs
		}
		t.begin(e)
	case carryon.EventRunStarted:
		if t.open != nil {
			t.open.attempt = "" // a new attempt calls the model again for the step
		}
		if t.mine() && !t.started {
			t.started = true
			t.resp.Status = "in_progress"
			t.emit("response.in_progress", map[string]any{"response": t.resp.snapshot(false)})
		}
	case carryon.EventModelDelta:
		var text string
		_ = json.Unmarshal(data["text"], &text)
		t.delta(text)
	case carryon.EventMessageAppended:
		var res carryon.AppendResult
		if json.Unmarshal(e.Data, &res) == nil {
			t.lastVer = res.Version
			for _, m := range res.Messages {
				t.message(m)
			}
		}
	case carryon.EventRunWaiting:
		if _, stop := data["budget"]; stop && t.mine() {
			// A budget stop ends the response incomplete (reason budget_exceeded); an approval
			// after a raise continues it, so that it completes as the run does.
			t.resp.Incomplete, t.budget = carryon.ReasonBudgetExceeded, true
			t.finish("incomplete", "response.incomplete", data)
			return
		}
		t.paused = t.mine()
	case carryon.EventRunApproved:
		t.paused = false
		if t.budget {
			t.budget, t.ended, t.resp.Incomplete, t.resp.Status = false, false, "", "in_progress"
		}
	case carryon.EventRunRequiresAction:
		t.finish("completed", "response.completed", data)
	case carryon.EventRunFinished:
		var status carryon.RunStatus
		_ = json.Unmarshal(data["status"], &status)
		if status == carryon.RunSucceeded {
			t.finish("completed", "response.completed", data)
		} else {
			t.finish("cancelled", "response.incomplete", data)
		}
	case carryon.EventRunFailed:
		t.finish("failed", "response.failed", data)
	}
}

// begin starts a segment's response at its first event.
func (t *translator) begin(e *carryon.Event) {
	if t.cur != t.segment {
		return
	}
	prev := t.record.PreviousResponseID
	if t.segment > 0 {
		prev = responseID(t.runID, t.segment-1)
	}
	t.resp = newResponse(responseID(t.runID, t.segment), t.run, t.record, e.CreatedAt.Unix(), prev)
	t.emit("response.created", map[string]any{"response": t.resp.snapshot(false)})
}

// delta streams model text.
func (t *translator) delta(text string) {
	if t.open == nil {
		t.openText()
	}
	it := t.open
	it.attempt += text
	switch {
	case strings.HasPrefix(it.sent, it.attempt):
		return // the same text again, already sent
	case strings.HasPrefix(it.attempt, it.sent):
	default:
		// The model said something else this time: what was sent stays an incomplete item.
		again := it.attempt
		t.closeText("incomplete")
		t.openText()
		it = t.open
		it.attempt = again
	}
	d := it.attempt[len(it.sent):]
	it.sent = it.attempt
	t.emit("response.output_text.delta", map[string]any{"item_id": it.id, "output_index": it.index, "content_index": 0, "delta": d, "logprobs": []any{}})
}

// openText starts an assistant message item.
func (t *translator) openText() {
	it := &textItem{index: len(t.resp.Output), id: t.itemID("msg")}
	t.open = it
	t.add(messageOutput(it.id, "", "in_progress"))
	t.emit("response.output_item.added", map[string]any{"output_index": it.index, "item": messageOutput(it.id, "", "in_progress")})
	t.emit("response.content_part.added", map[string]any{"item_id": it.id, "output_index": it.index, "content_index": 0, "part": textPart("")})
}

// add appends an item to the segment's output.
func (t *translator) add(item map[string]any) {
	if t.mine() {
		t.resp.Output = append(t.resp.Output, item)
	}
}

// closeText ends the open text item with text (the committed text, or what was sent when
// status is incomplete).
func (t *translator) closeText(status string, text ...string) {
	it := t.open
	if it == nil {
		return
	}
	t.open = nil
	final := it.sent
	if len(text) > 0 {
		final = text[0]
	}
	t.emit("response.output_text.done", map[string]any{"item_id": it.id, "output_index": it.index, "content_index": 0, "text": final, "logprobs": []any{}})
	t.emit("response.content_part.done", map[string]any{"item_id": it.id, "output_index": it.index, "content_index": 0, "part": textPart(final)})
	done := messageOutput(it.id, final, status)
	if t.mine() && it.index < len(t.resp.Output) {
		t.resp.Output[it.index] = done
	}
	t.emit("response.output_item.done", map[string]any{"output_index": it.index, "item": messageOutput(it.id, final, status)})
}

// message reads a message the run stored: its assistant messages are output items.
func (t *translator) message(m *carryon.Message) {
	if m.Kind == carryon.KindSummary && m.RunID == t.runID && strings.HasSuffix(m.RequestID, "/compact") && !m.Deleted && t.compaction != nil {
		// The run's automatic compaction (a durable step, under RUN_ID/STEP/compact): its item.
		cmp, index := t.compaction(t.run.OwnerID, m.SessionID, m.Seq), len(t.resp.Output)
		t.add(cmp)
		t.emit("response.output_item.added", map[string]any{"output_index": index, "item": cmp})
		t.emit("response.output_item.done", map[string]any{"output_index": index, "item": cmp})
		return
	}
	if m.Role != carryon.RoleAssistant || m.Kind == carryon.KindSummary {
		return
	}
	if m.Deleted { // the message was deleted since: its text is redacted in the events too
		if t.open != nil {
			t.closeText("completed", "")
		}
		return
	}
	if m.Content != "" {
		if t.open == nil {
			t.openText()
			t.open.sent = m.Content
			t.emit("response.output_text.delta", map[string]any{"item_id": t.open.id, "output_index": t.open.index, "content_index": 0, "delta": m.Content, "logprobs": []any{}})
		}
		t.closeText("completed", m.Content)
	} else {
		t.closeText("incomplete")
	}
	var calls []carryon.ToolCall
	_ = json.Unmarshal(m.ToolCalls, &calls)
	for _, c := range calls {
		if !t.clientFn[c.Name] {
			continue // carryon's own tools are not items
		}
		args := string(c.Arguments)
		if args == "" {
			args = "{}"
		}
		id, index := t.itemID("fc"), len(t.resp.Output)
		item := func(a, status string) map[string]any {
			return map[string]any{"type": typeFunctionCall, "id": id, "call_id": c.ID, "name": c.Name, "arguments": a, "status": status}
		}
		t.add(item(args, "completed"))
		t.emit("response.output_item.added", map[string]any{"output_index": index, "item": item("", "in_progress")})
		t.emit("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": index, "delta": args})
		t.emit("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": index, "name": c.Name, "arguments": args})
		t.emit("response.output_item.done", map[string]any{"output_index": index, "item": item(args, "completed")})
	}
}

// finish ends the segment with status, as the event typ.
func (t *translator) finish(status, typ string, data map[string]json.RawMessage) {
	t.closeText("incomplete")
	var u carryon.Usage
	_ = json.Unmarshal(data["usage"], &u)
	if t.mine() {
		t.resp.Status = status
		t.resp.Usage = &responseUsage{
			InputTokens: u.InputTokens - t.usageBase.InputTokens, OutputTokens: u.OutputTokens - t.usageBase.OutputTokens,
			InputDetails: map[string]int{"cached_tokens": 0}, OutputDetails: map[string]int{"reasoning_tokens": 0},
		}
		t.resp.Usage.TotalTokens = t.resp.Usage.InputTokens + t.resp.Usage.OutputTokens
		if status == "failed" {
			var msg string
			_ = json.Unmarshal(data["error"], &msg)
			t.resp.Error = &responseError{Code: "server_error", Message: msg}
		}
		t.emit(typ, map[string]any{"response": t.resp.snapshot(true)})
		t.ended = true
	}
	t.usageBase = u
}

// textPart is an output_text content part.
func textPart(text string) map[string]any {
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}
}

// messageOutput is an assistant message output item.
func messageOutput(id, text, status string) map[string]any {
	content := []any{}
	if status != "in_progress" {
		content = append(content, textPart(text))
	}
	return map[string]any{"type": typeMessage, "id": id, "role": "assistant", "status": status, "content": content}
}
