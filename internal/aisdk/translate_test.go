package aisdk

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
)

// events builds a run's stored events from (type, data) pairs, seq from 1.
func events(pairs ...any) []*carryon.Event {
	var out []*carryon.Event
	for i := 0; i < len(pairs); i += 2 {
		b, _ := json.Marshal(pairs[i+1])
		out = append(out, &carryon.Event{RunID: "run_x", Seq: int64(len(out) + 1), Type: pairs[i].(carryon.EventType), Data: b})
	}
	return out
}

// translate feeds the events to a translator of run and returns its chunks from seq from on,
// and the finish of a pause when the events end there, as stream sends them.
func translate(run *carryon.Run, evs []*carryon.Event, from int64) []map[string]any {
	t := newTranslator(run)
	var out []map[string]any
	for _, e := range evs {
		t.feed(e)
		for _, c := range t.take() {
			if c.pos >= from {
				out = append(out, c.body)
			}
		}
	}
	return append(out, t.pending...)
}

func typesOf(chunks []map[string]any) string {
	var s []string
	for _, c := range chunks {
		s = append(s, c["type"].(string))
	}
	return strings.Join(s, " ")
}

func textOf(chunks []map[string]any) string {
	var b strings.Builder
	for _, c := range chunks {
		if c["type"] == "text-delta" {
			b.WriteString(c["delta"].(string))
		}
	}
	return b.String()
}

func assistant(content string, calls ...carryon.ToolCall) carryon.AppendResult {
	m := &carryon.Message{Role: carryon.RoleAssistant, Content: content}
	if len(calls) > 0 {
		m.ToolCalls, _ = json.Marshal(calls)
	}
	return carryon.AppendResult{Messages: []*carryon.Message{m}}
}

func delta(text string) map[string]any { return map[string]any{"step": 1, "text": text} }

// TestTakeoverRepeatsNoText: a runner that takes the run over after a crash calls the model
// again; the deltas it repeats are not sent again, so the text is the reply once; a new call
// that says something else ends the text part and starts another.
func TestTakeoverRepeatsNoText(t *testing.T) {
	run := &carryon.Run{ID: "run_x"}
	same := events(
		carryon.EventRunQueued, map[string]any{}, carryon.EventRunStarted, map[string]any{"attempt": 1},
		carryon.EventModelDelta, delta("one "), carryon.EventModelDelta, delta("two "),
		carryon.EventRunStarted, map[string]any{"attempt": 2},
		carryon.EventModelDelta, delta("one "), carryon.EventModelDelta, delta("two three"),
		carryon.EventMessageAppended, assistant("one two three"),
		carryon.EventRunFinished, map[string]any{"status": "succeeded"},
	)
	c := translate(run, same, 0)
	if got, want := typesOf(c), "start start-step text-start text-delta text-delta text-delta text-end finish-step finish"; got != want || textOf(c) != "one two three" {
		t.Fatalf("chunks %q (text %q), want %q", got, textOf(c), want)
	}
	other := events(
		carryon.EventRunQueued, map[string]any{}, carryon.EventRunStarted, map[string]any{"attempt": 1},
		carryon.EventModelDelta, delta("one "),
		carryon.EventRunStarted, map[string]any{"attempt": 2},
		carryon.EventModelDelta, delta("uno"),
		carryon.EventMessageAppended, assistant("uno"),
		carryon.EventRunFinished, map[string]any{"status": "succeeded"},
	)
	c = translate(run, other, 0)
	if got, want := typesOf(c), "start start-step text-start text-delta text-end text-start text-delta text-end finish-step finish"; got != want || c[5]["id"] == c[2]["id"] {
		t.Fatalf("chunks %q (%v), want %q with two text ids", got, c, want)
	}
}

// TestReplayAcrossToolOutputs: the whole run replayed (a resume) holds the client tool call, its
// output and the answer after it, with no finish between; the stream after the output (the
// chat request that sent it) holds only what came after it; the stream that stopped for the
// output ends with finish (tool-calls).
func TestReplayAcrossToolOutputs(t *testing.T) {
	run := &carryon.Run{ID: "run_x", Tools: []carryon.ClientTool{{Name: "get_weather"}}}
	call := carryon.ToolCall{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}
	evs := events(
		carryon.EventRunQueued, map[string]any{}, carryon.EventRunStarted, map[string]any{},
		carryon.EventMessageAppended, assistant("", call),
		carryon.EventRunRequiresAction, map[string]any{},
	)
	stopped := translate(run, evs, 0)
	if got, want := typesOf(stopped), "start start-step tool-input-start tool-input-delta tool-input-available finish-step finish"; got != want || stopped[len(stopped)-1]["finishReason"] != "tool-calls" {
		t.Fatalf("the stopped stream %q, want %q", got, want)
	}
	if stopped[2]["dynamic"] != nil {
		t.Fatalf("a client tool's call is a dynamic part: %v", stopped[2])
	}
	from := int64(len(evs) + 1)
	evs = append(evs, events(
		carryon.EventToolOutputs, map[string]any{"call_ids": []string{"call_1"}}, carryon.EventRunStarted, map[string]any{},
		carryon.EventMessageAppended, carryon.AppendResult{Messages: []*carryon.Message{{Role: carryon.RoleTool, ToolCallID: "call_1", Content: "sunny"}}},
		carryon.EventModelDelta, delta("Sunny."), carryon.EventMessageAppended, assistant("Sunny."),
		carryon.EventRunFinished, map[string]any{"status": "succeeded"},
	)...)
	for i, e := range evs {
		e.Seq = int64(i + 1)
	}
	whole := translate(run, evs, 0)
	if got, want := typesOf(whole), "start start-step tool-input-start tool-input-delta tool-input-available finish-step tool-output-available start-step text-start text-delta text-end finish-step finish"; got != want {
		t.Fatalf("the replay %q, want %q", got, want)
	}
	after := translate(run, evs, from)
	if got, want := typesOf(after), "tool-output-available start-step text-start text-delta text-end finish-step finish"; got != want || after[0]["output"] != "sunny" {
		t.Fatalf("after the output %q (%v), want %q", got, after, want)
	}
}

// TestRunEnds: a cancelled run's stream ends with abort, a failed one's with error and its
// message; a deleted assistant message streams no text.
func TestRunEnds(t *testing.T) {
	run := &carryon.Run{ID: "run_x"}
	c := translate(run, events(carryon.EventRunQueued, map[string]any{}, carryon.EventModelDelta, delta("hi"),
		carryon.EventRunFinished, map[string]any{"status": "cancelled"}), 0)
	if got := typesOf(c); got != "start start-step text-start text-delta text-end finish-step abort" {
		t.Fatalf("cancelled: %q", got)
	}
	c = translate(run, events(carryon.EventRunQueued, map[string]any{}, carryon.EventRunFailed, map[string]any{"error": "model unreachable"}), 0)
	if got := typesOf(c); got != "start error" || c[1]["errorText"] != "model unreachable" {
		t.Fatalf("failed: %q %v", got, c)
	}
	deleted := carryon.AppendResult{Messages: []*carryon.Message{{Role: carryon.RoleAssistant, Content: "", Deleted: true}}}
	c = translate(run, events(carryon.EventRunQueued, map[string]any{}, carryon.EventMessageAppended, deleted,
		carryon.EventRunFinished, map[string]any{"status": "succeeded"}), 0)
	if got := typesOf(c); got != "start finish" {
		t.Fatalf("deleted: %q", got)
	}
}
