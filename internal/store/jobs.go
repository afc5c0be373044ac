package store

import (
	"context"
	"time"
)

// Jobs leases background jobs that one instance runs at a time, and keeps where each got to.
type Jobs interface {
	// ClaimJob takes or renews the job's lease for holder until now+ttl when it is free, expired or
	// holder's already, and returns the job's saved state; ok is false (and nothing changes) when
	// another holder's lease runs.
	ClaimJob(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (state string, ok bool, err error)
	// SaveJob records the job's state if holder still holds its lease, and reports whether it did.
	SaveJob(ctx context.Context, name, holder, state string) (bool, error)
}

// Extractions records how far facts were learned from each session.
type Extractions interface {
	// ExtractedSeq returns the last message seq of the owner's session that facts were learned
	// from (0: none yet).
	ExtractedSeq(ctx context.Context, owner, sessionID string) (int64, error)
	// SetExtracted moves the session's mark from seq from to seq to (at the session's version),
	// and reports whether the mark was still at from (false: another extraction moved it; nothing
	// is written).
	SetExtracted(ctx context.Context, owner, sessionID string, from, to, version int64, at time.Time) (bool, error)
	// IdleUnextracted lists active sessions of agent whose last write was in [since, before),
	// that have messages after their extraction mark and whose owner learns facts (UserSettings), least recently active first, after the
	// session q.After (keyset paging), at most q.Limit.
	IdleUnextracted(ctx context.Context, q IdleQuery) ([]IdleSession, error)
}

// IdleQuery selects the sessions an idle extraction pass learns from.
type IdleQuery struct {
	Agent         string
	Since, Before time.Time
	// After is the last session of the page before: its last activity and id (zero: the start).
	AfterActive time.Time
	AfterID     string
	Limit       int
}

// IdleSession is a session an idle extraction learns from: its owner, id and last activity.
type IdleSession struct {
	SessionRef
	LastActiveAt time.Time
}
