package model

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"time"
)

// RetryPolicy bounds WithRetry. Zero fields take their defaults.
type RetryPolicy struct {
	// MaxAttempts is the total number of attempts, the first included (default 4).
	MaxAttempts int
	// BaseDelay is the backoff before the second attempt; it doubles each time (default 500ms).
	BaseDelay time.Duration
	// MaxDelay caps the backoff (default 8s). A server asking for a longer wait than this
	// (Retry-After) ends the retries: its error is returned with RetryAfter set, so the caller
	// can decide whether to wait that long.
	MaxDelay time.Duration
	// OnRetry, when set, is called before each backoff with the attempt that failed (1-based),
	// its error and the wait; for logs and metrics.
	OnRetry func(attempt int, err error, wait time.Duration)
}

// withDefaults returns p with its zero fields filled in.
func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 500 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 8 * time.Second
	}
	if p.MaxDelay < p.BaseDelay {
		p.MaxDelay = p.BaseDelay
	}
	return p
}

// backoff returns the wait after the given failed attempt (1-based): exponential, capped at
// MaxDelay, with "equal jitter" (between half and all of the step) so that clients that failed
// together do not come back together.
func (p RetryPolicy) backoff(attempt int) time.Duration {
	d := p.BaseDelay
	for i := 1; i < attempt && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	half := d / 2
	return half + rand.N(d-half+1)
}

// WithRetry returns a Provider that retries p's failed calls under policy. A call is retried
// only when its error is retryable (IsRetryable) and nothing has been yielded to the consumer
// yet: once a chunk went out, an error ends the stream as is, so a consumer never sees a delta
// twice. The wait is the server's Retry-After when it gave one, else exponential backoff with
// jitter; a cancelled context ends the wait at once.
func WithRetry(p Provider, policy RetryPolicy) Provider {
	return &retrying{p: p, policy: policy.withDefaults()}
}

// retrying is the Provider WithRetry returns.
type retrying struct {
	p      Provider
	policy RetryPolicy
}

// Name returns the wrapped provider's name.
func (r *retrying) Name() string { return r.p.Name() }

// Stream runs attempts until one succeeds, one fails after yielding, the error is not retryable,
// the attempts run out or ctx is done.
func (r *retrying) Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		for attempt := 1; ; attempt++ {
			yielded := false
			var failure error
			for c, err := range r.p.Stream(ctx, req) {
				if err != nil {
					failure = err
					break
				}
				yielded = true
				if !yield(c, nil) {
					return
				}
			}
			if failure == nil {
				return
			}
			if yielded || attempt >= r.policy.MaxAttempts || !IsRetryable(failure) || ctx.Err() != nil {
				yield(Chunk{}, failure)
				return
			}
			wait := r.policy.backoff(attempt)
			if e, ok := AsError(failure); ok && e.RetryAfter > 0 {
				if e.RetryAfter > r.policy.MaxDelay {
					yield(Chunk{}, failure)
					return
				}
				wait = e.RetryAfter
			}
			if r.policy.OnRetry != nil {
				r.policy.OnRetry(attempt, failure, wait)
			}
			if err := sleep(ctx, wait); err != nil {
				yield(Chunk{}, &Error{
					Provider: r.p.Name(),
					Message:  fmt.Sprintf("retry abandoned: %v (last attempt: %v)", err, failure),
					Err:      err,
				})
				return
			}
		}
	}
}

// sleep waits for d or until ctx is done, whichever comes first, and returns ctx's error in the
// second case.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
