package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/store"
)

// GetIdempotency returns the owner's record for key, expired or not. ENOTFOUND.
func (t *tx) GetIdempotency(ctx context.Context, owner, key string) (*store.IdempotencyRecord, error) {
	r := store.IdempotencyRecord{OwnerID: owner, Key: key}
	var created, expires int64
	var session sql.NullString
	err := t.tx.QueryRowContext(ctx, `SELECT session_id, fingerprint, state, result, created_at, expires_at FROM idempotency
		WHERE owner_id = ? AND key = ?`, owner, key).Scan(&session, &r.Fingerprint, &r.State, &r.Result, &created, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, carryon.Errorf(carryon.ENOTFOUND, "request id %q not found", key)
	} else if err != nil {
		return nil, wrap(err, "get idempotency")
	}
	r.SessionID, r.CreatedAt, r.ExpiresAt = session.String, fromMicros(created), fromMicros(expires)
	return &r, nil
}

// PutIdempotency inserts the record or replaces the owner's record with the same key.
func (t *tx) PutIdempotency(ctx context.Context, r *store.IdempotencyRecord) error {
	if err := t.Writable(); err != nil {
		return err
	}
	session := sql.NullString{String: r.SessionID, Valid: r.SessionID != ""}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO idempotency (owner_id, key, session_id, fingerprint, state, result,
		created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (owner_id, key) DO UPDATE SET session_id = excluded.session_id, fingerprint = excluded.fingerprint,
		state = excluded.state, result = excluded.result, created_at = excluded.created_at, expires_at = excluded.expires_at`,
		r.OwnerID, r.Key, session, r.Fingerprint, r.State, r.Result, micros(r.CreatedAt), micros(r.ExpiresAt))
	return wrap(err, "put idempotency")
}

// DeleteIdempotency removes the owner's record for key, if any.
func (t *tx) DeleteIdempotency(ctx context.Context, owner, key string) error {
	if err := t.Writable(); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `DELETE FROM idempotency WHERE owner_id = ? AND key = ?`, owner, key)
	return wrap(err, "delete idempotency")
}

// SweepIdempotency removes every record that expired before t and returns how many.
func (t *tx) SweepIdempotency(ctx context.Context, before time.Time) (int64, error) {
	if err := t.Writable(); err != nil {
		return 0, err
	}
	res, err := t.tx.ExecContext(ctx, `DELETE FROM idempotency WHERE expires_at < ?`, micros(before))
	if err != nil {
		return 0, wrap(err, "sweep idempotency")
	}
	n, err := res.RowsAffected()
	return n, wrap(err, "sweep idempotency")
}
