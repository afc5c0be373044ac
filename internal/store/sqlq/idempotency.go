package sqlq

import (
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// GetIdempotency returns the owner's record for key, expired or not. ENOTFOUND. Inside Write it
// reads the row with Dialect.LockForDelete, so two writers of one record take turns (a driver
// whose rows are locked this way must also lock the key while no record exists yet: a row lock
// cannot lock a missing row).
func (t *Tx) GetIdempotency(ctx context.Context, owner, key string) (*store.IdempotencyRecord, error) {
	r := store.IdempotencyRecord{OwnerID: owner, Key: key}
	var created, expires int64
	var session *string
	err := t.Conn.QueryRow(ctx, `SELECT session_id, fingerprint, state, result, created_at, expires_at FROM idempotency
		WHERE owner_id = ? AND key = ?`+t.lockIfWriting(t.d.LockForDelete), owner, key).
		Scan(&session, &r.Fingerprint, &r.State, &r.Result, &created, &expires)
	if errors.Is(err, ErrNoRows) {
		return nil, carryon.Errorf(carryon.ENOTFOUND, "request id %q not found", key)
	} else if err != nil {
		return nil, t.Wrap(err, "get idempotency")
	}
	r.SessionID, r.CreatedAt, r.ExpiresAt = Text(session), FromMicros(created), FromMicros(expires)
	if r.Result, err = expandResult(r.Result); err != nil {
		return nil, t.Wrap(err, "read idempotency result")
	}
	return &r, nil
}

// PutIdempotency inserts the record or replaces the owner's record with the same key (INSERT …
// ON CONFLICT DO UPDATE, so a concurrent insert of the same key replaces instead of failing).
func (t *Tx) PutIdempotency(ctx context.Context, r *store.IdempotencyRecord) error {
	if err := t.Writable(); err != nil {
		return err
	}
	_, err := t.Conn.Exec(ctx, `INSERT INTO idempotency (owner_id, key, session_id, fingerprint, state, result,
		created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (owner_id, key) DO UPDATE SET session_id = excluded.session_id, fingerprint = excluded.fingerprint,
		state = excluded.state, result = excluded.result, created_at = excluded.created_at, expires_at = excluded.expires_at`,
		r.OwnerID, r.Key, NullText(r.SessionID), r.Fingerprint, r.State, compactResult(r.Result), Micros(r.CreatedAt), Micros(r.ExpiresAt))
	return t.Wrap(err, "put idempotency")
}

// A request id's stored answer is compressed (DEFLATE) when that makes it shorter: an answer
// holds the messages or documents its write stored, so keeping it whole would store them twice
// for the request-id window. A compressed answer starts with the byte compressedResult, which no
// JSON text starts with; an answer stored whole (or before compression) is read as it is.
const compressedResult = 0x00

// minCompressed is the size below which an answer is stored as it is.
const minCompressed = 96

func compactResult(b []byte) []byte {
	if len(b) < minCompressed {
		return b
	}
	var buf bytes.Buffer
	buf.WriteByte(compressedResult)
	w := flateWriters.Get().(*flate.Writer)
	defer flateWriters.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(b); err != nil || w.Close() != nil || buf.Len() >= len(b) {
		return b
	}
	return buf.Bytes()
}

// flateWriters keeps compressors for reuse: a new one allocates about a megabyte of tables,
// far more than the answers it compresses. The fastest level: resetting the others' tables cost
// more CPU than the few bytes more they save on an answer of a kilobyte.
var flateWriters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(io.Discard, flate.BestSpeed) // a valid level never fails
	return w
}}

func expandResult(b []byte) ([]byte, error) {
	if len(b) == 0 || b[0] != compressedResult {
		return b, nil
	}
	return io.ReadAll(flate.NewReader(bytes.NewReader(b[1:])))
}

// DeleteIdempotency removes the owner's record for key, if any.
func (t *Tx) DeleteIdempotency(ctx context.Context, owner, key string) error {
	if err := t.Writable(); err != nil {
		return err
	}
	_, err := t.Conn.Exec(ctx, `DELETE FROM idempotency WHERE owner_id = ? AND key = ?`, owner, key)
	return t.Wrap(err, "delete idempotency")
}

// SweepIdempotency removes every record that expired before t and returns how many.
func (t *Tx) SweepIdempotency(ctx context.Context, before time.Time) (int64, error) {
	if err := t.Writable(); err != nil {
		return 0, err
	}
	n, err := t.Conn.Exec(ctx, `DELETE FROM idempotency WHERE expires_at < ?`, Micros(before))
	return n, t.Wrap(err, "sweep idempotency")
}

// HasExpiredIdempotency says whether a record expired before t.
func (t *Tx) HasExpiredIdempotency(ctx context.Context, before time.Time) (bool, error) {
	return t.exists(ctx, "expired idempotency", `SELECT 1 FROM idempotency WHERE expires_at < ? LIMIT 1`, Micros(before))
}

// exists says whether query, which selects a constant, has a row.
func (t *Tx) exists(ctx context.Context, what, query string, args ...any) (bool, error) {
	var one int
	err := t.Conn.QueryRow(ctx, query, args...).Scan(&one)
	if errors.Is(err, ErrNoRows) {
		return false, nil
	}
	return err == nil, t.Wrap(err, what)
}
