package runs_test

import (
	"context"
	"encoding/json"
	"iter"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/tool"
)

// stepCaller makes one step with the given calls, then answers "Done.".
type stepCaller struct{ calls []model.ToolCall }

func (c *stepCaller) Name() string { return "step-caller" }

func (c *stepCaller) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == model.RoleTool {
			yield(model.Chunk{Delta: "Done.", FinishReason: model.FinishStop}, nil)
			return
		}
		yield(model.Chunk{ToolCalls: c.calls, FinishReason: model.FinishToolCalls}, nil)
	}
}

// TestStepMemoryCommitsWithResults: the working memory changes of a step's update_working_memory
// calls are staged while the step runs (a later call of the step sees them, the stored memory does
// not change) and stored with the step's tool results in one commit: each revision names the
// version of the results, and memory.updated comes with the stored document after the calls.
func TestStepMemoryCommitsWithResults(t *testing.T) {
	t.Parallel()
	for _, d := range drivers() {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newHubEnv(t, d.open(t), sessions.Config{})
			var s *carryon.Session
			var during carryon.WorkingMemory
			look := &probe{name: "look", fn: func(context.Context, tool.Call) {
				st, err := e.sess.GetWorkingMemory(e.alice, s.ID)
				if err != nil {
					t.Error(err)
					return
				}
				during = st.WorkingMemory
			}}
			m := &stepCaller{calls: []model.ToolCall{
				{ID: "call_1", Name: "update_working_memory", Arguments: []byte(`{"patch":{"goal":"ship","notes":["a"]}}`)},
				{ID: "call_2", Name: "look", Arguments: []byte(`{}`)},
				{ID: "call_3", Name: "update_working_memory", Arguments: []byte(`{"patch":{"next_action":"test","notes":null}}`)},
			}}
			svc := runner(t, e.st, e.sess, e.data, m, runs.Config{Poll: 20 * time.Millisecond}, look)
			work(t, svc)
			var run *carryon.Run
			s, run = e.startRun(t, svc, "go")
			if got := waitRun(t, svc, e.alice, run.ID); got.Status != carryon.RunSucceeded {
				t.Fatalf("run: %s (%s)", got.Status, got.Error)
			}
			if len(during) != 0 {
				t.Fatalf("the memory was stored before the step's checkpoint: %v", during)
			}
			acts, err := svc.Actions(e.alice, run.ID)
			if err != nil || len(acts) != 3 {
				t.Fatalf("journal: %v %v", acts, err)
			}
			var preview map[string]any
			if err := json.Unmarshal([]byte(acts[2].Result), &preview); err != nil || preview["goal"] != "ship" || preview["next_action"] != "test" || preview["notes"] != nil {
				t.Fatalf("the second call did not see the first's staged change: %q", acts[2].Result)
			}
			st, err := e.sess.GetWorkingMemory(e.alice, s.ID)
			if err != nil || st.WorkingMemoryVersion != 2 || st.WorkingMemory["goal"] != "ship" || st.WorkingMemory["next_action"] != "test" {
				t.Fatalf("stored memory: %+v %v", st, err)
			}
			msgs, err := e.sess.ListMessages(e.alice, s.ID, carryon.MessageFilter{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			results := map[int64]int{}
			for _, msg := range msgs.Items {
				if msg.Role == carryon.RoleTool {
					results[msg.Version]++
				}
			}
			revs, err := e.sess.WorkingMemoryHistory(e.alice, s.ID, carryon.RevisionFilter{})
			if err != nil || len(revs.Items) != 2 {
				t.Fatalf("revisions: %+v %v", revs, err)
			}
			for _, r := range revs.Items {
				if results[r.Version] != 3 || r.RunID != run.ID {
					t.Fatalf("revision %d at version %d (run %q); the three results at versions %v", r.WorkingMemoryVersion, r.Version, r.RunID, results)
				}
			}
			stream, err := svc.Events(e.alice, run.ID, 0, false)
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Close()
			var types []carryon.EventType
			var doc map[string]any
			for {
				ev, ok, err := stream.Next()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				types = append(types, ev.Type)
				if ev.Type == carryon.EventWorkingMemoryUpdated {
					if err := json.Unmarshal(ev.Data, &doc); err != nil {
						t.Fatal(err)
					}
				}
			}
			var finished, updated, after int
			for i, ty := range types {
				switch ty {
				case carryon.EventToolFinished:
					finished++
				case carryon.EventWorkingMemoryUpdated:
					updated++
					after = finished
					if i+1 >= len(types) || types[i+1] != carryon.EventMessageAppended {
						t.Fatalf("memory.updated is not followed by the results' message.appended: %v", types)
					}
				}
			}
			if updated != 1 || after != 3 || doc["goal"] != "ship" || doc["next_action"] != "test" {
				t.Fatalf("events %v, memory.updated %d times after %d calls, document %v", types, updated, after, doc)
			}
		})
	}
}
