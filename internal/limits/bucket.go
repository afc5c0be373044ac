package limits

import (
	"math"
	"time"
)

// bucket is one user's token bucket: it holds at most burst tokens and gains rate tokens a
// second; a request takes one. debt is what other instances took from the user (limit_shares)
// since the bucket was last used: it is taken at the next use.
type bucket struct {
	tokens float64
	last   time.Time
	fresh  bool    // never used: full
	debt   float64 // tokens other instances took, taken at the next refill
	used   int64   // tokens this instance took since it started (what it shares)
}

// rate is a token bucket's policy: rate tokens a second, at most burst.
type rate struct {
	perSecond float64
	burst     float64
}

// refill brings b to now under p: the tokens gained since b.last, less the debt, at most burst
// and at least -burst (a debt larger than a full bucket waits no longer than an empty one).
func (b *bucket) refill(now time.Time, p rate) {
	if b.fresh || b.last.IsZero() {
		b.tokens, b.fresh = p.burst, false
	} else if d := now.Sub(b.last); d > 0 {
		b.tokens += d.Seconds() * p.perSecond
	}
	b.last = now
	b.tokens = math.Max(-p.burst, math.Min(p.burst, b.tokens-b.debt))
	b.debt = 0
}

// take takes a token at now when there is one and reports whether it did; when not, wait is how
// long until there is one.
func (b *bucket) take(now time.Time, p rate) (ok bool, wait time.Duration) {
	b.refill(now, p)
	if b.tokens >= 1 {
		b.tokens--
		b.used++
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / p.perSecond * float64(time.Second))
}

// remaining is the whole tokens b holds, and reset how long until it is full again.
func (b *bucket) remaining(p rate) (n int64, reset time.Duration) {
	n = int64(math.Max(0, math.Floor(b.tokens)))
	return n, time.Duration((p.burst - b.tokens) / p.perSecond * float64(time.Second))
}

// ceilSeconds rounds d up to whole seconds.
func ceilSeconds(d time.Duration) int64 {
	return int64(math.Ceil(d.Seconds()))
}
