package model_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/model"
)

// step is one element of a fake attempt: a chunk, or an error that ends the attempt.
type step struct {
	chunk model.Chunk
	err   error
}

// fakeProvider plays one scripted attempt per call; calls beyond the script replay the last one.
type fakeProvider struct {
	attempts [][]step
	calls    atomic.Int32
}

// Name returns "fake".
func (f *fakeProvider) Name() string { return "fake" }

// Stream plays the next scripted attempt.
func (f *fakeProvider) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		n := int(f.calls.Add(1)) - 1
		steps := f.attempts[min(n, len(f.attempts)-1)]
		for _, s := range steps {
			if s.err != nil {
				yield(model.Chunk{}, s.err)
				return
			}
			if !yield(s.chunk, nil) {
				return
			}
		}
	}
}

var (
	fast      = model.RetryPolicy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}
	retryable = &model.Error{Provider: "fake", Status: 503, Retryable: true, Message: "unavailable"}
	fatal     = &model.Error{Provider: "fake", Status: 400, Message: "bad request"}
	done      = step{chunk: model.Chunk{FinishReason: model.FinishStop}}
)

// deltas runs seq and returns its deltas and its error.
func deltas(seq iter.Seq2[model.Chunk, error]) ([]string, error) {
	var out []string
	for c, err := range seq {
		if err != nil {
			return out, err
		}
		if c.Delta != "" {
			out = append(out, c.Delta)
		}
	}
	return out, nil
}

func TestRetryUntilSuccess(t *testing.T) {
	t.Parallel()
	p := &fakeProvider{attempts: [][]step{{{err: retryable}}, {{err: retryable}}, {{chunk: model.Chunk{Delta: "ok"}}, done}}}
	got, err := deltas(model.WithRetry(p, fast).Stream(context.Background(), model.Request{}))
	if err != nil || fmt.Sprint(got) != "[ok]" || p.calls.Load() != 3 {
		t.Fatalf("deltas %v, err %v after %d calls; want [ok], nil after 3", got, err, p.calls.Load())
	}
}

func TestRetryGivesUpAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	p := &fakeProvider{attempts: [][]step{{{err: retryable}}}}
	_, err := deltas(model.WithRetry(p, fast).Stream(context.Background(), model.Request{}))
	if err != retryable || p.calls.Load() != 4 {
		t.Fatalf("err %v after %d calls; want the last error after 4", err, p.calls.Load())
	}
}

func TestRetryNotRetryable(t *testing.T) {
	t.Parallel()
	p := &fakeProvider{attempts: [][]step{{{err: fatal}}}}
	_, err := deltas(model.WithRetry(p, fast).Stream(context.Background(), model.Request{}))
	if err != fatal || p.calls.Load() != 1 {
		t.Fatalf("err %v after %d calls; want the error after 1", err, p.calls.Load())
	}
}

// TestNoRetryAfterDelta checks that once a delta went out, a retryable error ends the stream as
// is: the consumer never sees a delta twice.
func TestNoRetryAfterDelta(t *testing.T) {
	t.Parallel()
	p := &fakeProvider{attempts: [][]step{
		{{chunk: model.Chunk{Delta: "Hel"}}, {err: retryable}},
		{{chunk: model.Chunk{Delta: "Hello"}}, done},
	}}
	got, err := deltas(model.WithRetry(p, fast).Stream(context.Background(), model.Request{}))
	if err != retryable || fmt.Sprint(got) != "[Hel]" || p.calls.Load() != 1 {
		t.Fatalf("deltas %v, err %v after %d calls; want [Hel], the error, after 1", got, err, p.calls.Load())
	}
}

// TestCancelDuringBackoff checks that a cancelled context ends a long backoff at once, with a
// non-retryable error that says so.
func TestCancelDuringBackoff(t *testing.T) {
	t.Parallel()
	p := &fakeProvider{attempts: [][]step{{{err: retryable}}}}
	ctx, cancel := context.WithCancel(context.Background())
	policy := model.RetryPolicy{BaseDelay: time.Hour, MaxDelay: time.Hour, OnRetry: func(int, error, time.Duration) { cancel() }}
	start := time.Now()
	_, err := deltas(model.WithRetry(p, policy).Stream(ctx, model.Request{}))
	if !errors.Is(err, context.Canceled) || model.IsRetryable(err) {
		t.Fatalf("err = %v, want a non-retryable cancellation", err)
	}
	if took := time.Since(start); took > 5*time.Second || p.calls.Load() != 1 {
		t.Fatalf("took %v and %d calls, want an immediate end after 1", took, p.calls.Load())
	}
}

// TestRetryAfterHonoured checks that the server's wait is used instead of the backoff, and that a
// wait beyond MaxDelay ends the retries.
func TestRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	asked := &model.Error{Provider: "fake", Status: 429, Retryable: true, RetryAfter: 3 * time.Millisecond}
	p := &fakeProvider{attempts: [][]step{{{err: asked}}, {done}}}
	var waits []time.Duration
	policy := fast
	policy.OnRetry = func(_ int, _ error, d time.Duration) { waits = append(waits, d) }
	if _, err := deltas(model.WithRetry(p, policy).Stream(context.Background(), model.Request{})); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(waits) != "[3ms]" {
		t.Errorf("waits = %v, want [3ms]", waits)
	}

	tooLong := &model.Error{Provider: "fake", Status: 429, Retryable: true, RetryAfter: time.Minute}
	p = &fakeProvider{attempts: [][]step{{{err: tooLong}}, {done}}}
	if _, err := deltas(model.WithRetry(p, fast).Stream(context.Background(), model.Request{})); err != tooLong || p.calls.Load() != 1 {
		t.Errorf("err %v after %d calls, want the 429 after 1", err, p.calls.Load())
	}
}

// TestBackoffGrowsAndIsBounded checks the waits: exponential with jitter within [d/2, d], capped.
func TestBackoffGrowsAndIsBounded(t *testing.T) {
	t.Parallel()
	p := &fakeProvider{attempts: [][]step{{{err: retryable}}}}
	var waits []time.Duration
	policy := model.RetryPolicy{MaxAttempts: 6, BaseDelay: time.Millisecond, MaxDelay: 4 * time.Millisecond,
		OnRetry: func(_ int, _ error, d time.Duration) { waits = append(waits, d) }}
	deltas(model.WithRetry(p, policy).Stream(context.Background(), model.Request{}))
	want := []time.Duration{1, 2, 4, 4, 4}
	if len(waits) != len(want) {
		t.Fatalf("waits = %v, want %d of them", waits, len(want))
	}
	for i, w := range waits {
		step := want[i] * time.Millisecond
		if w < step/2 || w > step {
			t.Errorf("wait %d = %v, want within [%v, %v]", i+1, w, step/2, step)
		}
	}
}

// TestConsumerStops checks that breaking out of the loop stops everything: no retry, no more calls.
func TestConsumerStops(t *testing.T) {
	t.Parallel()
	p := &fakeProvider{attempts: [][]step{{{chunk: model.Chunk{Delta: "a"}}, {chunk: model.Chunk{Delta: "b"}}, done}}}
	for c := range model.WithRetry(p, fast).Stream(context.Background(), model.Request{}) {
		if c.Delta == "a" {
			break
		}
	}
	if p.calls.Load() != 1 {
		t.Errorf("calls = %d, want 1", p.calls.Load())
	}
}

func TestRetryDefaults(t *testing.T) {
	t.Parallel()
	p := &fakeProvider{attempts: [][]step{{{err: retryable}}}}
	var waits []time.Duration
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	policy := model.RetryPolicy{OnRetry: func(_ int, _ error, d time.Duration) { waits = append(waits, d); cancel() }}
	deltas(model.WithRetry(p, policy).Stream(ctx, model.Request{}))
	if len(waits) != 1 || waits[0] < 250*time.Millisecond || waits[0] > 500*time.Millisecond {
		t.Errorf("first default wait = %v, want within [250ms, 500ms]", waits)
	}
	if model.WithRetry(p, policy).Name() != "fake" {
		t.Error("WithRetry must keep the provider's name")
	}
}
