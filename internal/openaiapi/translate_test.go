package openaiapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
)

// events makes stored run events from (type, data) pairs.
func events(pairs ...any) []*carryon.Event {
	var out []*carryon.Event
	for i := 0; i < len(pairs); i += 2 {
		data, _ := json.Marshal(pairs[i+1])
		out = append(out, &carryon.Event{RunID: "run_abc", Seq: int64(len(out) + 1), Type: pairs[i].(carryon.EventType), Data: data, CreatedAt: time.Unix(1700000000, 0)})
	}
	return out
}

func translate(run *carryon.Run, segment int, evs []*carryon.Event) *translator {
	t := newTranslator(run, segment)
	for _, e := range evs {
		t.feed(e)
	}
	return t
}

func reply(text string) map[string]any {
	return map[string]any{"session_id": "sess_1", "version": 3, "messages": []any{map[string]any{"seq": 2, "role": "assistant", "content": text}}}
}

// A runner that took the run over calls the model again: text already sent is not sent again;
// text that differs closes what was sent as an incomplete item.
func TestTranslatorAcrossAttempts(t *testing.T) {
	run := &carryon.Run{ID: "run_abc", SessionID: "sess_1", Model: "m"}
	started := map[string]any{"attempt": 1}
	for _, tc := range []struct {
		name           string
		first, second  []string
		deltas, output string
		items          int
	}{
		{"the same text again", []string{"Hel"}, []string{"He", "llo"}, "Hello", "Hello", 1},
		{"other text", []string{"Hel"}, []string{"Bye"}, "HelBye", "Bye", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pairs := []any{carryon.EventRunQueued, map[string]any{}, carryon.EventRunStarted, started}
			for _, d := range tc.first {
				pairs = append(pairs, carryon.EventModelDelta, map[string]any{"step": 1, "text": d})
			}
			pairs = append(pairs, carryon.EventRunStarted, started)
			for _, d := range tc.second {
				pairs = append(pairs, carryon.EventModelDelta, map[string]any{"step": 1, "text": d})
			}
			pairs = append(pairs, carryon.EventMessageAppended, reply(tc.output), carryon.EventRunFinished, map[string]any{"status": "succeeded"})
			tr := translate(run, 0, events(pairs...))
			var deltas strings.Builder
			var types []string
			for i, e := range tr.take() {
				if e.Seq != int64(i) || e.Body["sequence_number"] != int64(i) {
					t.Fatalf("event %d has sequence number %d", i, e.Seq)
				}
				types = append(types, e.Type)
				if e.Type == "response.output_text.delta" {
					deltas.WriteString(e.Body["delta"].(string))
				}
			}
			if deltas.String() != tc.deltas || outputText(tr.resp.Output) != tc.output || len(tr.resp.Output) != tc.items || tr.resp.Status != "completed" {
				t.Fatalf("deltas %q, output %q in %d items (%s); want %q, %q in %d\n%s", deltas.String(), outputText(tr.resp.Output), len(tr.resp.Output), tr.resp.Status, tc.deltas, tc.output, tc.items, strings.Join(types, " "))
			}
			if strings.Count(strings.Join(types, " "), "response.in_progress") != 1 || types[len(types)-1] != "response.completed" {
				t.Fatalf("events: %s", strings.Join(types, " "))
			}
		})
	}
}

func TestParseResponseID(t *testing.T) {
	for id, want := range map[string]struct {
		run     string
		segment int
		ok      bool
	}{
		"run_abc": {"run_abc", 0, true}, "run_abc_2": {"run_abc", 2, true},
		"run_abc_0": {}, "run_abc_02": {}, "run_": {}, "resp_abc": {}, "run_abc_x": {}, "run__1": {},
	} {
		run, segment, ok := parseResponseID(id)
		if run != want.run || segment != want.segment || ok != want.ok {
			t.Errorf("parseResponseID(%q) = %q, %d, %v; want %+v", id, run, segment, ok, want)
		}
		if ok && responseID(run, segment) != id {
			t.Errorf("responseID(%q, %d) = %q", run, segment, responseID(run, segment))
		}
	}
}
