package store

import (
	"context"
	"sync/atomic"
)

// A read that tolerates staleness may be served by a read replica (a streaming standby), when the
// driver has one (PostgreSQL with a read pool: serve --read-dsn). Which reads do is decided in one
// place, the HTTP route table (httpapi's Route.MayLag): the native API's listings and the
// inspector's views, whose answer no write depends on. The door marks the context of such a
// request with WithStaleRead after it has authenticated the caller, and every Read made with that
// context may go to the replica. Nothing else is ever marked: a Write never uses the replica, nor
// does a Read inside a write's path (the restore before a write, a version or request-id check,
// a run's lease, the context builder, the doors' lookups before their writes).
//
// A driver serves a marked Read from the replica only while the replica is within its staleness
// bound; otherwise, or when it cannot be reached, the primary answers. A marked Read whose fn
// finds nothing on the replica (ENOTFOUND: a session made a moment ago that the replica has not
// replayed yet) is read again on the primary, so a marked Read may run fn twice: fn must set what
// it reads, not add to it.

// staleReadKey is the context key of a StaleRead.
type staleReadKey struct{}

// StaleRead is a request's consent to reads from a replica, and what came of it.
type StaleRead struct{ replica atomic.Bool }

// WithStaleRead returns ctx marked so that its Reads may be served by a read replica, and the
// StaleRead, which says afterwards whether one was.
func WithStaleRead(ctx context.Context) (context.Context, *StaleRead) {
	sr := &StaleRead{}
	return context.WithValue(ctx, staleReadKey{}, sr), sr
}

// StaleReadOf returns the StaleRead of ctx, or nil when its Reads must go to the primary.
func StaleReadOf(ctx context.Context) *StaleRead {
	sr, _ := ctx.Value(staleReadKey{}).(*StaleRead)
	return sr
}

// ServedByReplica records that a Read was answered by a replica (a driver calls it).
func (sr *StaleRead) ServedByReplica() { sr.replica.Store(true) }

// Replica reports whether a Read made with the marked context was answered by a replica.
func (sr *StaleRead) Replica() bool { return sr != nil && sr.replica.Load() }
