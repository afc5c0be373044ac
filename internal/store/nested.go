package store

import "context"

// A write's fn runs with a context that says so: a driver's Write marks the context it hands to
// fn with WithinWrite, and refuses a Write whose context is marked for the same store
// (InsideWrite), instead of waiting for the transaction that waits for it. The mark travels with
// the context, to whatever goroutine fn hands it to, so a nested Write is caught wherever it
// runs, as long as it is given fn's context: fn's parameter shadows the caller's.

// writeKey is the context key of the stores whose write transactions a context runs inside.
type writeKey struct{}

// writeMark is one store a context runs a write's fn for, and the marks of outer writes.
type writeMark struct {
	store any
	outer *writeMark
}

// WithinWrite returns ctx marked as the context of a write transaction's fn on the store s (the
// driver's own value, compared by identity).
func WithinWrite(ctx context.Context, s any) context.Context {
	outer, _ := ctx.Value(writeKey{}).(*writeMark)
	return context.WithValue(ctx, writeKey{}, &writeMark{store: s, outer: outer})
}

// InsideWrite reports whether ctx is the context of a write transaction's fn on the store s, or
// derives from one.
func InsideWrite(ctx context.Context, s any) bool {
	for m, _ := ctx.Value(writeKey{}).(*writeMark); m != nil; m = m.outer {
		if m.store == s {
			return true
		}
	}
	return false
}
