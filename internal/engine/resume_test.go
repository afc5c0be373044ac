package engine_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/tool"
)

// stallTool blocks its first call until the run is cut off, and answers the next ones.
type stallTool struct {
	mu      sync.Mutex
	keys    []string
	started chan struct{}
}

func (*stallTool) Name() string                { return "build" }
func (*stallTool) Description() string         { return "Builds the project." }
func (*stallTool) Schema() json.RawMessage     { return json.RawMessage(`{"type":"object"}`) }
func (*stallTool) Effect() carryon.EffectClass { return carryon.EffectIdempotent }

func (s *stallTool) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	s.mu.Lock()
	s.keys = append(s.keys, c.IdempotencyKey)
	first := len(s.keys) == 1
	s.mu.Unlock()
	if first {
		close(s.started)
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	}
	return tool.Result{Content: "built"}, nil
}

func (s *stallTool) calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.keys...)
}

// TestResumeDoesNotAskAgain: a server stops while step 1's tool call runs. The next runner
// resumes the step from the journal: the model is not asked for step 1 again, the call runs again
// under the same idempotency key, and the session holds the step once.
func TestResumeDoesNotAskAgain(t *testing.T) {
	t.Parallel()
	w := openaiWire
	srv := newFakeLLM(t, w.path, func(n int, body []byte, rw http.ResponseWriter) {
		switch n {
		case 1:
			w.toolCall(rw, "call_1", "build", `{}`)
		case 2:
			wantRoundTrip(t, w.read(t, body), "call_1", "built")
			w.text(rw, "Built.")
		default:
			t.Errorf("unexpected request %d", n)
			w.fail(rw, http.StatusBadRequest, nil)
		}
	})
	stall := &stallTool{started: make(chan struct{})}
	f := newFixture(t, model.WithRetry(w.provider(srv.URL), retryFast), w.model, stall)
	id, run := f.start(t, "Build it")
	select {
	case <-stall.started:
	case <-time.After(20 * time.Second):
		t.Fatal("the tool was never called")
	}
	f.stop() // the server shuts down mid-call; the run keeps its journal and waits for a runner

	paused, err := f.runs.GetRun(f.alice, run.ID)
	if err != nil || paused.Status != carryon.RunRunning || paused.Step != 0 {
		t.Fatalf("after the shutdown: %v %+v", err, paused)
	}
	acts, err := f.runs.Actions(f.alice, run.ID)
	if err != nil || len(acts) != 1 || acts[0].Status != carryon.ActionStarted {
		t.Fatalf("journal after the shutdown: %v %+v", err, acts)
	}
	if got := shapes(t, f.messages(t, id)); got != "user assistant>call_1" || srv.count() != 1 {
		t.Fatalf("after the shutdown: messages %s, %d requests", got, srv.count())
	}

	f.startRuns() // the server starts again
	run = f.wait(t, run.ID)
	if run.Status != carryon.RunSucceeded || run.Reply != "Built." || run.Attempt != 2 {
		t.Fatalf("resumed run: status %s, reply %q, error %q, attempt %d", run.Status, run.Reply, run.Error, run.Attempt)
	}
	if srv.count() != 2 {
		t.Errorf("the server saw %d requests, want 2: step 1 must not be asked again", srv.count())
	}
	if got := shapes(t, f.messages(t, id)); got != "user assistant>call_1 tool<call_1 assistant" {
		t.Errorf("messages: %s", got)
	}
	keys := stall.calls()
	if len(keys) != 2 || keys[0] != keys[1] || keys[0] != run.ID+"/1/0" {
		t.Errorf("the tool ran with keys %v, want twice %s/1/0", keys, run.ID)
	}
	acts, err = f.runs.Actions(f.alice, run.ID)
	if err != nil || len(acts) != 1 || acts[0].Status != carryon.ActionSucceeded || acts[0].Attempt != 2 || acts[0].Result != "built" {
		t.Errorf("journal: %v %+v", err, acts)
	}
}
