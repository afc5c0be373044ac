package postgres

import (
	"context"
	"hash/fnv"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// idempotencyLockKey is the advisory lock key of an owner's request id: a 64-bit hash, so two keys
// may share a lock (then, vanishingly rarely, one is refused with EINFLIGHT while the other runs).
func idempotencyLockKey(owner, key string) int64 {
	h := fnv.New64a()
	h.Write([]byte("carryon/idempotency\x00" + owner + "\x00" + key))
	return int64(h.Sum64())
}

// GetIdempotency returns the owner's record for key, expired or not. ENOTFOUND. Inside Write it
// first takes a transaction advisory lock on (owner, key), then reads the row FOR UPDATE: two
// write transactions with the same request id never run at once, even while no record exists
// yet (a row lock alone cannot lock a missing row). The second does not wait for the first: it
// gets EINFLIGHT at once, and a retry after the first committed reads its record.
func (t *tx) GetIdempotency(ctx context.Context, owner, key string) (*store.IdempotencyRecord, error) {
	if !t.ReadOnly {
		if err := t.lockKey(ctx, owner, key); err != nil {
			return nil, err
		}
	}
	return t.Tx.GetIdempotency(ctx, owner, key)
}

// lockKey takes the transaction's lock on (owner, key) if it is free. When another transaction
// holds it (the same request still in flight), it refuses at once with EINFLIGHT instead of
// waiting: a waiter would hold a pooled connection for as long as the first request runs, and a
// burst of retries would exhaust the pool. It never changes the session's lock_timeout.
func (t *tx) lockKey(ctx context.Context, owner, key string) error {
	var got bool
	if err := t.tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, idempotencyLockKey(owner, key)).Scan(&got); err != nil {
		return t.Wrap(err, "lock idempotency key")
	}
	if !got {
		e := carryon.Errorf(carryon.EINFLIGHT, "request id %q is still being processed by another request; retry later", key)
		e.RetryAfterSeconds = 1
		return e
	}
	return nil
}
