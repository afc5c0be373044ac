package sqlq

import (
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// UserLimits returns the limits stored for the user; found is false when none are.
func (t *Tx) UserLimits(ctx context.Context, userID string) (carryon.Limits, time.Time, bool, error) {
	var raw string
	var at int64
	err := t.Conn.QueryRow(ctx, `SELECT limits, updated_at FROM user_limits WHERE user_id = ?`, userID).Scan(&raw, &at)
	if errors.Is(err, ErrNoRows) {
		return carryon.Limits{}, time.Time{}, false, nil
	}
	if err != nil {
		return carryon.Limits{}, time.Time{}, false, t.Wrap(err, "get user limits")
	}
	var l carryon.Limits
	if err := json.Unmarshal([]byte(raw), &l); err != nil {
		return carryon.Limits{}, time.Time{}, false, t.Wrap(err, "decode user limits")
	}
	return l, FromMicros(at), true, nil
}

// PutUserLimits stores the user's limits, replacing any; limits equal to the stored ones keep
// their updated_at (a repeated PUT answers as the first). ENOTFOUND when the user is missing.
func (t *Tx) PutUserLimits(ctx context.Context, userID string, l carryon.Limits, now time.Time) error {
	if err := t.Writable(); err != nil {
		return err
	}
	raw, err := json.Marshal(l)
	if err != nil {
		return t.Wrap(err, "encode user limits")
	}
	var one int
	err = t.Conn.QueryRow(ctx, `SELECT 1 FROM users WHERE id = ? AND forgetting_at IS NULL`, userID).Scan(&one)
	if errors.Is(err, ErrNoRows) {
		return NotFound("user", userID)
	} else if err != nil {
		return t.Wrap(err, "put user limits")
	}
	_, err = t.Conn.Exec(ctx, `INSERT INTO user_limits (user_id, limits, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (user_id) DO UPDATE SET limits = excluded.limits, updated_at = excluded.updated_at
		WHERE user_limits.limits <> excluded.limits`, userID, string(raw), Micros(now))
	return t.Wrap(err, "put user limits")
}

// StoredBytes counts the octets of the owner's messages, working-memory documents and long-term
// memory items (octet_length: bytes, not characters, on both databases).
func (t *Tx) StoredBytes(ctx context.Context, owner string) (int64, error) {
	var n int64
	err := t.Conn.QueryRow(ctx, `SELECT
		COALESCE((SELECT SUM(octet_length(m.content) + COALESCE(octet_length(m.tool_calls), 0) + COALESCE(octet_length(m.metadata), 0))
			FROM messages m JOIN sessions s ON s.session_key = m.session_key WHERE s.owner_id = ?1), 0)
		+ COALESCE((SELECT SUM(octet_length(w.document)) FROM working_memory w JOIN sessions s ON s.id = w.session_id WHERE s.owner_id = ?1), 0)
		+ COALESCE((SELECT SUM(octet_length(l.value) + octet_length(l.text)) FROM memories l WHERE l.owner_id = ?1), 0)`, owner).Scan(&n)
	return n, t.Wrap(err, "count stored bytes")
}

// RunningRuns counts the owner's running runs (from the runs_running_owner index).
func (t *Tx) RunningRuns(ctx context.Context, owner string) (int64, error) {
	var n int64
	err := t.Conn.QueryRow(ctx, `SELECT COUNT(*) FROM runs WHERE owner_id = ? AND status = 'running'`, owner).Scan(&n)
	return n, t.Wrap(err, "count running runs")
}

// LockRunSlots tries to take the owner's lock of run claims with Dialect.TryLock; without one
// the transaction holds every lock already.
func (t *Tx) LockRunSlots(ctx context.Context, owner string) (bool, error) {
	if t.d.TryLock == "" {
		return true, nil
	}
	if err := t.Writable(); err != nil {
		return false, err
	}
	h := fnv.New64a()
	h.Write([]byte("carryon/run-slots\x00" + owner))
	var got bool
	err := t.Conn.QueryRow(ctx, t.d.TryLock, int64(h.Sum64())).Scan(&got)
	return got, t.Wrap(err, "lock run slots")
}

// PutLimitShares stores the instance's shares, one row per instance and user.
func (t *Tx) PutLimitShares(ctx context.Context, shares []store.LimitShare) error {
	if err := t.Writable(); err != nil {
		return err
	}
	args := make([][]any, len(shares))
	for i, s := range shares {
		args[i] = []any{s.InstanceID, s.UserID, s.Used, s.PrevUsed, s.Streams, Micros(s.UpdatedAt)}
	}
	_, err := t.Conn.ExecEach(ctx, `INSERT INTO limit_shares (instance_id, user_id, used, prev_used, streams, updated_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (instance_id, user_id)
		DO UPDATE SET used = excluded.used, prev_used = excluded.prev_used, streams = excluded.streams, updated_at = excluded.updated_at`, args)
	return t.Wrap(err, "put limit shares")
}

// LimitSharesSince returns the shares updated at or after since.
func (t *Tx) LimitSharesSince(ctx context.Context, since time.Time) ([]store.LimitShare, error) {
	rows, err := t.Conn.Query(ctx, `SELECT instance_id, user_id, used, prev_used, streams, updated_at FROM limit_shares
		WHERE updated_at >= ?`, Micros(since))
	if err != nil {
		return nil, t.Wrap(err, "read limit shares")
	}
	defer rows.Close()
	var out []store.LimitShare
	for rows.Next() {
		var s store.LimitShare
		var at int64
		if err := rows.Scan(&s.InstanceID, &s.UserID, &s.Used, &s.PrevUsed, &s.Streams, &at); err != nil {
			return nil, t.Wrap(err, "read limit shares")
		}
		s.UpdatedAt = FromMicros(at)
		out = append(out, s)
	}
	return out, t.Wrap(rows.Err(), "read limit shares")
}

// DeleteLimitShares deletes the shares updated before before.
func (t *Tx) DeleteLimitShares(ctx context.Context, before time.Time) error {
	if err := t.Writable(); err != nil {
		return err
	}
	_, err := t.Conn.Exec(ctx, `DELETE FROM limit_shares WHERE updated_at < ?`, Micros(before))
	return t.Wrap(err, "delete limit shares")
}
