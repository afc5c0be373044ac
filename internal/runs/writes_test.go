package runs_test

import (
	"context"
	"fmt"
	"iter"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
)

// writeCounter is a store that counts its committed write transactions.
type writeCounter struct {
	store.Store
	n atomic.Int64
}

func (c *writeCounter) Write(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	err := c.Store.Write(ctx, fn)
	if err == nil {
		c.n.Add(1)
	}
	return err
}

func (c *writeCounter) Unwrap() store.Store { return c.Store }

// twoCalls is a model whose first answer calls write_file twice and whose next ends the turn.
type twoCalls struct{}

func (twoCalls) Name() string { return "two-calls" }

func (twoCalls) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == model.RoleTool {
			yield(model.Chunk{Delta: "Both files are written.", FinishReason: model.FinishStop}, nil)
			return
		}
		if !yield(model.Chunk{Delta: "Writing two files."}, nil) {
			return
		}
		yield(model.Chunk{ToolCalls: []model.ToolCall{
			{ID: "call_a", Name: "write_file", Arguments: []byte(`{"path":"a.txt","content":"a"}`)},
			{ID: "call_b", Name: "write_file", Arguments: []byte(`{"path":"b.txt","content":"b"}`)},
		}, FinishReason: model.FinishToolCalls}, nil)
	}
}

// TestStepWrites: a run whose first step calls k = 2 tools and whose second gives the answer
// commits k + 1 write transactions for the first step (its plan with the model's deltas and the
// first call's start, before its effect; the second call's start with the first one's outcome;
// the checkpoint with the second one's outcome), one for the final answer, which ends the run,
// and one to start the run, which a process with a free runner claims in the same transaction:
// 5 in all, each with its events, on both stores; 6 when the run is started before any runner
// works (a runner claims it). (On 9e1964c every event took a transaction of its own: 26 for this
// run; on f5af245 a call's start and its outcome took one each, the claim and the run's end one
// more each: 10.)
func TestStepWrites(t *testing.T) {
	t.Parallel()
	for _, d := range drivers() {
		for _, working := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/working=%v", d.name, working), func(t *testing.T) {
				t.Parallel()
				stepWrites(t, d, working)
			})
		}
	}
}

// stepWrites is TestStepWrites on one store, with the runner working before the run starts or not.
func stepWrites(t *testing.T, d driver, working bool) {
	{
		{
			st := &writeCounter{Store: d.open(t)}
			e := newHubEnv(t, st, sessions.Config{})
			svc := runner(t, st, e.sess, e.data, twoCalls{}, runs.Config{Poll: 20 * time.Millisecond, LeaseTTL: time.Hour})
			s, err := e.sess.Create(e.alice, carryon.NewSession{})
			if err != nil {
				t.Fatal(err)
			}
			var stop func()
			if working {
				stop = work(t, svc)
				waitFor(t, "the runner to work", func() bool { return runs.Working(svc) })
			}
			before := st.n.Load()
			run, err := svc.Start(e.alice, s.ID, carryon.NewRun{Message: "write a and b"})
			if err != nil {
				t.Fatal(err)
			}
			if !working {
				stop = work(t, svc)
			}
			if got := waitRun(t, svc, e.alice, run.ID); got.Status != carryon.RunSucceeded {
				t.Fatalf("run %s: %s", got.Status, got.Error)
			}
			stop()
			const k = 2
			starts := int64(2) // the start, then the claim
			if working {
				starts = 1
			}
			if got, want := st.n.Load()-before, starts+(k+1)+1; got != want {
				t.Fatalf("the run took %d write transactions, want %d", got, want)
			}
			es, err := svc.Events(e.alice, run.ID, 0, false)
			if err != nil {
				t.Fatal(err)
			}
			defer es.Close()
			var types []carryon.EventType
			for {
				ev, ok, err := es.Next()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				types = append(types, ev.Type)
			}
			want := []carryon.EventType{carryon.EventRunQueued, carryon.EventRunStarted,
				carryon.EventModelDelta, carryon.EventMessageAppended,
				carryon.EventToolStarted, carryon.EventToolFinished, carryon.EventToolStarted, carryon.EventToolFinished,
				carryon.EventMessageAppended, carryon.EventModelDelta, carryon.EventMessageAppended, carryon.EventRunFinished}
			if len(types) != len(want) {
				t.Fatalf("events %v, want %v", types, want)
			}
			for i := range want {
				if types[i] != want[i] {
					t.Fatalf("events %v, want %v", types, want)
				}
			}
		}
	}
}
