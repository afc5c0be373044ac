package engine_test

import (
	"context"
	"encoding/json"
	"iter"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/model"
)

// stepClock is a clock that moves only when told.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *stepClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// slowWords is a model that says its words one a second on the clock.
type slowWords struct {
	clock *stepClock
	words []string
}

func (slowWords) Name() string { return "slow" }

func (p slowWords) Stream(_ context.Context, _ model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		for _, w := range p.words {
			if !yield(model.Chunk{Delta: w}, nil) {
				return
			}
			p.clock.advance(time.Second)
		}
		yield(model.Chunk{FinishReason: model.FinishStop}, nil)
	}
}

// TestDeltaArrivalTime: a stored model.delta says when the first piece of its text arrived
// (data.at), not when it was flushed: coalesced into one delta, the answer's at is its first
// word's time; one delta a word, each has its own word's time.
func TestDeltaArrivalTime(t *testing.T) {
	t.Parallel()
	type delta struct {
		text string
		at   int // seconds after the start
	}
	for _, c := range []struct {
		name  string
		every time.Duration
		want  []delta
	}{
		{"coalesced", time.Hour, []delta{{"Hello there. Bye.", 0}}},
		{"a delta a word", time.Nanosecond, []delta{{"Hello ", 0}, {"there. ", 1}, {"Bye.", 2}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
			clock := &stepClock{t: start}
			f := newFixtureConfig(t, slowWords{clock: clock, words: []string{"Hello ", "there. ", "Bye."}}, engine.Config{Model: "slow", DeltaEvery: c.every, Now: clock.now})
			_, run := f.start(t, "hi")
			if run = f.wait(t, run.ID); run.Status != carryon.RunSucceeded {
				t.Fatalf("run %s: %s", run.Status, run.Error)
			}
			var got []string
			for _, e := range f.events(t, run.ID) {
				if e.Type != carryon.EventModelDelta {
					continue
				}
				var d struct {
					Text string
					At   time.Time
				}
				if err := json.Unmarshal(e.Data, &d); err != nil {
					t.Fatalf("delta %s: %v", e.Data, err)
				}
				got = append(got, d.Text+"@"+d.At.Sub(start).String())
			}
			var want []string
			for _, w := range c.want {
				want = append(want, w.text+"@"+(time.Duration(w.at)*time.Second).String())
			}
			if !slices.Equal(got, want) {
				t.Fatalf("deltas (text@at) %q, want %q", got, want)
			}
		})
	}
}
