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
