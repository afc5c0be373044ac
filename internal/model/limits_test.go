package model_test

import (
	"context"
	"errors"
	"iter"
	"testing"
	"testing/synctest"
	"time"

	"github.com/carryon-hub/carryon/internal/model"
)

// tickingProvider yields a delta every tick, count times (forever when count is 0), then
// finishes; it never looks at its context, as a careless provider would not.
type tickingProvider struct {
	tick  time.Duration
	count int
}

func (p tickingProvider) Name() string { return "ticking" }

func (p tickingProvider) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		for i := 0; p.count == 0 || i < p.count; i++ {
			<-time.After(p.tick) // the provider's own pace, in the bubble's fake time
			if !yield(model.Chunk{Delta: "x"}, nil) {
				return
			}
		}
		yield(model.Chunk{FinishReason: model.FinishStop}, nil)
	}
}

// TestLimitsSlowConsumerIsNotIdle: the time a consumer takes over a chunk is not silence of the
// model: a consumer slower than the idle bound still gets the whole answer.
func TestLimitsSlowConsumerIsNotIdle(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := model.WithLimits(tickingProvider{tick: time.Second, count: 5}, model.Limits{Idle: 2 * time.Second})
		n := 0
		for c, err := range p.Stream(t.Context(), model.Request{}) {
			if err != nil {
				t.Fatalf("after %d chunks: %v", n, err)
			}
			n++
			if c.Delta != "" {
				<-time.After(time.Minute) // the consumer stores the chunk, slowly
			}
		}
		if n != 6 {
			t.Fatalf("%d chunks, want 6", n)
		}
	})
}

// TestLimitsProviderThatIgnoresItsContext: the bounds hold on the chunks too, so a provider that
// keeps yielding after its context ended is stopped at the next chunk.
func TestLimitsProviderThatIgnoresItsContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := model.WithLimits(tickingProvider{tick: time.Second}, model.Limits{Total: 10500 * time.Millisecond})
		start := time.Now()
		resp, err := model.Collect(p.Stream(t.Context(), model.Request{}))
		e, ok := model.AsError(err)
		if !ok || e.Code != model.CodeTimeout || !e.Retryable || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error %v, want a retryable %s", err, model.CodeTimeout)
		}
		if got, want := err.Error(), "model: ticking: model_timeout: the call took longer than 10.5s (total timeout)"; got != want {
			t.Errorf("error %q, want %q", got, want)
		}
		if took := time.Since(start); took != 11*time.Second || len(resp.Text) != 10 {
			t.Errorf("ended after %s with %d bytes, want 11s (the first chunk past the bound) and 10", took, len(resp.Text))
		}
	})
}

// TestLimitsCallerCancels: when the caller's context ends, the caller's error comes back, not a
// breach of the limits (and it is not retryable).
func TestLimitsCallerCancels(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		p := model.WithLimits(tickingProvider{tick: time.Second}, model.Limits{FirstByte: time.Hour, Idle: time.Hour})
		n := 0
		var last error
		for _, err := range p.Stream(ctx, model.Request{}) {
			if err != nil {
				last = err
				break
			}
			if n++; n == 3 {
				cancel()
			}
		}
		// The ticking provider ignores ctx, so it is the watch that stops it at the next chunk.
		if !errors.Is(last, context.Canceled) {
			t.Fatalf("error %v after the caller cancelled, want context.Canceled", last)
		}
		if e, ok := model.AsError(last); ok && e.Code != "" {
			t.Fatalf("error %v after the caller cancelled, want no limit's", last)
		}
		if model.IsRetryable(last) {
			t.Fatalf("error %v is retryable", last)
		}
	})
}

// TestLimitsProgressCountsOutput: a provider's Progress reports count against the output bound
// before anything is yielded, and keep the call from looking silent.
func TestLimitsProgressCountsOutput(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var reporting model.Provider = progressProvider{}
		p := model.WithRetry(model.WithLimits(reporting, model.Limits{FirstByte: time.Second, Idle: time.Second, MaxOutputBytes: 1000}), model.RetryPolicy{})
		_, err := model.Collect(p.Stream(t.Context(), model.Request{}))
		e, ok := model.AsError(err)
		if !ok || e.Code != model.CodeOutputLimit || e.Retryable || model.IsRetryable(err) {
			t.Fatalf("error %v, want %s, not retryable", err, model.CodeOutputLimit)
		}
	})
}

// progressProvider reads 100 bytes of a tool call's arguments every half second, reporting
// them, and yields nothing until its context ends.
type progressProvider struct{}

func (progressProvider) Name() string { return "progress" }

func (progressProvider) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				yield(model.Chunk{}, model.TransportError(ctx, "progress", ctx.Err(), false))
				return
			case <-t.C:
				model.Progress(ctx, 100)
			}
		}
	}
}
