package store

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
)

// LimitShare is what one server instance has counted of one user: the requests it took from the
// user's token bucket since it started (Used, only ever growing; PrevUsed is Used as of the
// instance's previous share of the user, 0 for its first) and the event streams the user has
// open on it now, as of UpdatedAt.
type LimitShare struct {
	InstanceID, UserID      string
	Used, PrevUsed, Streams int64
	UpdatedAt               time.Time
}

// Limits stores the limits an admin set per user, and what the limits count: the instances'
// shares, the bytes and the running runs of an owner.
type Limits interface {
	// UserLimits returns the limits set for the user and when they were set; found is false (and
	// the limits empty) when none were.
	UserLimits(ctx context.Context, userID string) (l carryon.Limits, updated time.Time, found bool, err error)
	// PutUserLimits stores the user's limits, replacing any. ENOTFOUND when the user does not
	// exist.
	PutUserLimits(ctx context.Context, userID string, l carryon.Limits, now time.Time) error
	// StoredBytes counts the bytes of the owner's messages (content, tool calls, metadata),
	// working-memory documents and long-term memory items. It reads every such row of the owner.
	StoredBytes(ctx context.Context, owner string) (int64, error)
	// RunningRuns counts the owner's runs in status running.
	RunningRuns(ctx context.Context, owner string) (int64, error)
	// LockRunSlots tries to take, to the end of a write transaction, the owner's lock of run
	// claims, and says whether it did: a transaction that holds it may count the owner's running
	// runs and claim more without another instance doing the same at once. Where write
	// transactions are serialised (SQLite) it always succeeds.
	LockRunSlots(ctx context.Context, owner string) (bool, error)
	// PutLimitShares stores this instance's shares (one row per instance and user, replaced).
	PutLimitShares(ctx context.Context, shares []LimitShare) error
	// LimitSharesSince returns every instance's shares updated at or after since.
	LimitSharesSince(ctx context.Context, since time.Time) ([]LimitShare, error)
	// DeleteLimitShares deletes the shares updated before before (instances that stopped).
	DeleteLimitShares(ctx context.Context, before time.Time) error
}
