package postgres

import (
	"context"
	"errors"
	"hash/fnv"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/store"
	"github.com/jackc/pgx/v5"
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
	lock := ""
	if !t.ReadOnly {
		if err := t.lockKey(ctx, owner, key); err != nil {
			return nil, err
		}
		lock = " FOR UPDATE"
	}
	r := store.IdempotencyRecord{OwnerID: owner, Key: key}
	var created, expires int64
	var session *string
	err := t.tx.QueryRow(ctx, `SELECT session_id, fingerprint, state, result, created_at, expires_at FROM idempotency
		WHERE owner_id = $1 AND key = $2`+lock, owner, key).Scan(&session, &r.Fingerprint, &r.State, &r.Result, &created, &expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, carryon.Errorf(carryon.ENOTFOUND, "request id %q not found", key)
	} else if err != nil {
		return nil, wrap(err, "get idempotency")
	}
	if session != nil {
		r.SessionID = *session
	}
	r.CreatedAt, r.ExpiresAt = fromMicros(created), fromMicros(expires)
	return &r, nil
}

// PutIdempotency inserts the record or replaces the owner's record with the same key (INSERT …
// ON CONFLICT DO UPDATE, so a concurrent insert of the same key replaces instead of failing).
func (t *tx) PutIdempotency(ctx context.Context, r *store.IdempotencyRecord) error {
	if err := t.Writable(); err != nil {
		return err
	}
	var session *string
	if r.SessionID != "" {
		session = &r.SessionID
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO idempotency (owner_id, key, session_id, fingerprint, state, result,
		created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (owner_id, key) DO UPDATE SET session_id = EXCLUDED.session_id, fingerprint = EXCLUDED.fingerprint,
		state = EXCLUDED.state, result = EXCLUDED.result, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at`,
		r.OwnerID, r.Key, session, r.Fingerprint, r.State, r.Result, micros(r.CreatedAt), micros(r.ExpiresAt))
	return wrap(err, "put idempotency")
}

// DeleteIdempotency removes the owner's record for key, if any.
func (t *tx) DeleteIdempotency(ctx context.Context, owner, key string) error {
	if err := t.Writable(); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, `DELETE FROM idempotency WHERE owner_id = $1 AND key = $2`, owner, key)
	return wrap(err, "delete idempotency")
}

// SweepIdempotency removes every record that expired before t and returns how many.
func (t *tx) SweepIdempotency(ctx context.Context, before time.Time) (int64, error) {
	if err := t.Writable(); err != nil {
		return 0, err
	}
	tag, err := t.tx.Exec(ctx, `DELETE FROM idempotency WHERE expires_at < $1`, micros(before))
	if err != nil {
		return 0, wrap(err, "sweep idempotency")
	}
	return tag.RowsAffected(), nil
}

// lockKey takes the transaction's lock on (owner, key) if it is free. When another transaction
// holds it (the same request still in flight), it refuses at once with EINFLIGHT instead of
// waiting: a waiter would hold a pooled connection for as long as the first request runs, and a
// burst of retries would exhaust the pool. It never changes the session's lock_timeout.
func (t *tx) lockKey(ctx context.Context, owner, key string) error {
	var got bool
	if err := t.tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, idempotencyLockKey(owner, key)).Scan(&got); err != nil {
		return wrap(err, "lock idempotency key")
	}
	if !got {
		e := carryon.Errorf(carryon.EINFLIGHT, "request id %q is still being processed by another request; retry later", key)
		e.RetryAfterSeconds = 1
		return e
	}
	return nil
}
