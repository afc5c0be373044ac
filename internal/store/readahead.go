package store

import "context"

// readAheadKey marks a context for WithReadAhead.
type readAheadKey struct{}

// WithReadAhead marks ctx for a Read that need not wait until what it saw is durable (SQLite may
// show a commit whose fsync is still running; Read otherwise waits for that fsync before it
// returns). Only for a read whose answer cannot tell anyone of such a commit: an API key's check
// is one, since no one holds a key before its creation is acknowledged, and a revocation or a
// forgotten user seen early only refuses sooner.
func WithReadAhead(ctx context.Context) context.Context {
	return context.WithValue(ctx, readAheadKey{}, true)
}

// ReadAhead reports whether ctx was marked by WithReadAhead.
func ReadAhead(ctx context.Context) bool {
	v, _ := ctx.Value(readAheadKey{}).(bool)
	return v
}
