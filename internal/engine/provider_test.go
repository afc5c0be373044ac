package engine_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/tool"
)

var retryFast = model.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}

const report = "# Report\n\nAll done.\n"

// TestToolConversation: a run of three steps against a fake server of each wire format. The
// model sets the working memory, writes a file, then answers; every step's request carries the
// stored state, and the session, journal and event stream end up exactly as the run went.
func TestToolConversation(t *testing.T) {
	t.Parallel()
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			srv := newFakeLLM(t, w.path, func(n int, body []byte, rw http.ResponseWriter) {
				v := w.read(t, body)
				if !slices.Contains(v.Tools, "update_working_memory") || !slices.Contains(v.Tools, "write_file") {
					t.Errorf("request %d offers tools %v", n, v.Tools)
				}
				switch n {
				case 1:
					if !strings.Contains(v.System, contextbuild.HeadingWorkingMemory+"\n(empty: no goal set yet)") || len(v.Msgs) != 1 || v.Msgs[0].Role != "user" || v.Msgs[0].Text != "Write the report" {
						t.Errorf("step 1 request: system %q, messages %+v", v.System, v.Msgs)
					}
					w.toolCall(rw, "call_1", "update_working_memory", `{"patch": {"goal": "Write`, ` the report", "next_action": "Write report.md"`, `}}`)
				case 2:
					wantRoundTrip(t, v, "call_1", `"goal":"Write the report"`)
					// The context was rebuilt from the stored state: the patched memory is in it.
					if !strings.Contains(v.System, "Goal: Write the report\nNext action: Write report.md") {
						t.Errorf("step 2 system message lacks the patched memory:\n%s", v.System)
					}
					args, _ := json.Marshal(map[string]string{"path": "report.md", "content": report})
					w.toolCall(rw, "call_2", "write_file", string(args[:10]), string(args[10:]))
				case 3:
					wantRoundTrip(t, v, "call_2", "")
					if !strings.Contains(v.System, contextbuild.HeadingTools) || !strings.Contains(v.System, "write_file(") {
						t.Errorf("step 3 system message lacks the tool digest:\n%s", v.System)
					}
					w.text(rw, "The report ", "is in ", "report.md.")
				default:
					t.Errorf("unexpected request %d", n)
					w.fail(rw, http.StatusBadRequest, nil)
				}
			})
			f := newFixture(t, model.WithRetry(w.provider(srv.URL), retryFast), w.model)
			sessionID, run := f.start(t, "Write the report")
			run = f.wait(t, run.ID)
			if run.Status != carryon.RunSucceeded || run.Reply != "The report is in report.md." || run.Error != "" || run.Step != 3 {
				t.Fatalf("run: status %s, reply %q, error %q, step %d", run.Status, run.Reply, run.Error, run.Step)
			}
			if srv.count() != 3 {
				t.Errorf("the server saw %d requests, want 3", srv.count())
			}
			if run.Usage.InputTokens != 20+20+10 || run.Usage.OutputTokens != 7+7+3 {
				t.Errorf("usage = %+v", run.Usage)
			}

			msgs := f.messages(t, sessionID)
			if got := shapes(t, msgs); got != "user assistant>call_1 tool<call_1 assistant>call_2 tool<call_2 assistant" {
				t.Fatalf("messages: %s", got)
			}
			for i, m := range msgs {
				if m.RunID != run.ID || m.Seq != int64(i+1) {
					t.Errorf("message %d: seq %d, run id %q, want %s", i, m.Seq, m.RunID, run.ID)
				}
			}
			if msgs[5].Content != run.Reply || msgs[2].Name != "update_working_memory" || msgs[4].Name != "write_file" {
				t.Errorf("messages: %q, tool names %q %q", msgs[5].Content, msgs[2].Name, msgs[4].Name)
			}

			wm, err := f.sess.GetWorkingMemory(f.alice, sessionID)
			if err != nil || wm.WorkingMemory.Goal() != "Write the report" || wm.WorkingMemory.NextAction() != "Write report.md" {
				t.Fatalf("working memory: %v %v", err, wm)
			}
			if b, err := os.ReadFile(filepath.Join(f.data, "workspaces", sessionID, "report.md")); err != nil || string(b) != report {
				t.Fatalf("report.md: %q %v", b, err)
			}

			acts, err := f.runs.Actions(f.alice, run.ID)
			if err != nil || len(acts) != 2 {
				t.Fatalf("journal: %v %+v", err, acts)
			}
			for i, want := range []struct{ call, tool, after string }{
				{"call_1", "update_working_memory", tool.Fingerprint([]byte(msgs[2].Content))},
				{"call_2", "write_file", tool.Fingerprint([]byte(report))},
			} {
				a := acts[i]
				if a.CallID != want.call || a.Tool != want.tool || a.Status != carryon.ActionSucceeded || a.Step != i+1 ||
					a.FingerprintAfter != want.after || a.FinishedAt == nil || a.IdempotencyKey == "" {
					t.Errorf("action %d: %+v", i, a)
				}
			}
			checkEvents(t, f.events(t, run.ID), run, msgs)
		})
	}
}

// wantRoundTrip checks that the request ends with the assistant's call id and its result.
func wantRoundTrip(t *testing.T, v view, id, result string) {
	t.Helper()
	n := len(v.Msgs)
	if n < 2 || !slices.Equal(v.Msgs[n-2].CallIDs, []string{id}) || v.Msgs[n-1].Role != "tool" || v.Msgs[n-1].ResultFor != id ||
		!strings.Contains(v.Msgs[n-1].Text, result) {
		t.Errorf("request does not end with call %s and its result %q: %+v", id, result, v.Msgs)
	}
}

// checkEvents checks a tool conversation's stream: gapless seqs, the deltas of each step adding up
// to its stored text, and the tool, memory and end events in order.
func checkEvents(t *testing.T, events []*carryon.Event, run *carryon.Run, msgs []*carryon.Message) {
	t.Helper()
	var kinds []string
	deltas := map[int]string{}
	for i, e := range events {
		if e.Seq != int64(i+1) || e.RunID != run.ID {
			t.Fatalf("event %d has seq %d, run %q", i, e.Seq, e.RunID)
		}
		switch e.Type {
		case carryon.EventModelDelta:
			var d struct {
				Step int
				Text string
			}
			if err := json.Unmarshal(e.Data, &d); err != nil || d.Text == "" {
				t.Fatalf("delta %s: %v", e.Data, err)
			}
			deltas[d.Step] += d.Text
			continue
		case carryon.EventMessageAppended:
			continue
		case carryon.EventWorkingMemoryUpdated:
			if !bytes.Contains(e.Data, []byte(`"goal":"Write the report"`)) {
				t.Errorf("memory.updated = %s", e.Data)
			}
		case carryon.EventRunFinished:
			if !bytes.Contains(e.Data, []byte(`"reply":"The report is in report.md."`)) {
				t.Errorf("run.finished = %s", e.Data)
			}
		}
		kinds = append(kinds, string(e.Type))
	}
	want := "run.queued run.started tool.started tool.finished memory.updated tool.started tool.finished run.finished"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	if deltas[3] != run.Reply || deltas[1] != msgs[1].Content || deltas[2] != msgs[3].Content {
		t.Errorf("deltas by step = %v; stored texts %q %q %q", deltas, msgs[1].Content, msgs[3].Content, run.Reply)
	}
}

// TestRateLimitedThenAnswered: a 429 with Retry-After: 0 is retried with the same request and
// the run succeeds.
func TestRateLimitedThenAnswered(t *testing.T) {
	t.Parallel()
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			srv := newFakeLLM(t, w.path, func(n int, body []byte, rw http.ResponseWriter) {
				switch n {
				case 1:
					w.fail(rw, http.StatusTooManyRequests, map[string]string{"Retry-After": "0"})
				case 2:
					w.text(rw, "Hello ", "there.")
				default:
					t.Errorf("unexpected request %d", n)
					w.fail(rw, http.StatusBadRequest, nil)
				}
			})
			// Deltas are coalesced: the whole answer comes in one event, flushed at its end.
			f := newFixtureEvery(t, model.WithRetry(w.provider(srv.URL), retryFast), w.model, time.Hour)
			id, run := f.start(t, "hi")
			run = f.wait(t, run.ID)
			if run.Status != carryon.RunSucceeded || run.Reply != "Hello there." {
				t.Fatalf("run: %s %q %q", run.Status, run.Reply, run.Error)
			}
			if srv.count() != 2 || !bytes.Equal(srv.body(0), srv.body(1)) {
				t.Fatalf("the server saw %d requests; the retry resent the same body: %v", srv.count(), srv.count() == 2 && bytes.Equal(srv.body(0), srv.body(1)))
			}
			if got := shapes(t, f.messages(t, id)); got != "user assistant" {
				t.Errorf("messages: %s", got)
			}
			var deltas []string
			for _, e := range f.events(t, run.ID) {
				if e.Type == carryon.EventModelDelta {
					deltas = append(deltas, string(e.Data))
				}
			}
			if len(deltas) != 1 || !strings.HasPrefix(deltas[0], `{"step":1,"text":"Hello there.","at":"`) {
				t.Errorf("delta events = %v, want the answer in one", deltas)
			}
		})
	}
}

// TestServerErrorMidRun: step 1's tool call succeeds, then the server fails every attempt of
// step 2. The run fails naming the provider and the status, and the session holds step 1 whole
// and nothing of step 2.
func TestServerErrorMidRun(t *testing.T) {
	t.Parallel()
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			srv := newFakeLLM(t, w.path, func(n int, body []byte, rw http.ResponseWriter) {
				if n == 1 {
					w.toolCall(rw, "call_1", "update_working_memory", `{"patch":{"goal":"Survive"}}`)
					return
				}
				w.fail(rw, http.StatusInternalServerError, nil)
			})
			f := newFixture(t, model.WithRetry(w.provider(srv.URL), retryFast), w.model)
			id, run := f.start(t, "Try it")
			run = f.wait(t, run.ID)
			if run.Status != carryon.RunFailed || strings.Count(run.Error, w.name) != 1 || !strings.Contains(run.Error, "status 500") {
				t.Fatalf("run: status %s, error %q; want failed naming %s and 500", run.Status, run.Error, w.name)
			}
			t.Logf("run error: %s", run.Error)
			if run.Step != 1 || run.Reply != "" {
				t.Errorf("run: step %d, reply %q", run.Step, run.Reply)
			}
			if srv.count() != 1+4 {
				t.Errorf("the server saw %d requests, want 1 + 4 attempts of step 2", srv.count())
			}
			msgs := f.messages(t, id)
			if got := shapes(t, msgs); got != "user assistant>call_1 tool<call_1" {
				t.Fatalf("messages: %s", got)
			}
			view, err := f.sess.Get(f.alice, id, carryon.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			last := msgs[len(msgs)-1]
			if view.MessageCount != 3 || view.LastSeq != 3 || view.Version != last.Version || view.WorkingMemoryVersion != 1 ||
				view.WorkingMemory.Goal() != "Survive" {
				t.Errorf("session: count %d, last seq %d, version %d (last message's %d), memory version %d, memory %v",
					view.MessageCount, view.LastSeq, view.Version, last.Version, view.WorkingMemoryVersion, view.WorkingMemory)
			}
			acts, err := f.runs.Actions(f.alice, run.ID)
			if err != nil || len(acts) != 1 || acts[0].Status != carryon.ActionSucceeded {
				t.Errorf("journal: %v %+v", err, acts)
			}
			events := f.events(t, run.ID)
			if e := events[len(events)-1]; e.Type != carryon.EventRunFailed || !bytes.Contains(e.Data, []byte("500")) {
				t.Errorf("last event %s %s", e.Type, e.Data)
			}
		})
	}
}
