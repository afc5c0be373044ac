package sqlq

import (
	"context"
	"errors"
	"time"

	"github.com/carryon-hub/carryon/internal/store"
)

// ClaimJob takes or renews a job's lease (store.Jobs): one upsert whose update applies only to an
// expired lease or the holder's own.
func (t *Tx) ClaimJob(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (string, bool, error) {
	if err := t.Writable(); err != nil {
		return "", false, err
	}
	n, err := t.Conn.Exec(ctx, `INSERT INTO job_leases (name, holder, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
		WHERE job_leases.expires_at < ? OR job_leases.holder = excluded.holder`,
		name, holder, Micros(now.Add(ttl)), Micros(now))
	if err != nil || n == 0 {
		return "", false, t.Wrap(err, "claim job")
	}
	var state string
	err = t.Conn.QueryRow(ctx, `SELECT state FROM job_leases WHERE name = ?`, name).Scan(&state)
	return state, err == nil, t.Wrap(err, "claim job")
}

// SaveJob records a job's state while holder holds its lease.
func (t *Tx) SaveJob(ctx context.Context, name, holder, state string) (bool, error) {
	if err := t.Writable(); err != nil {
		return false, err
	}
	n, err := t.Conn.Exec(ctx, `UPDATE job_leases SET state = ? WHERE name = ? AND holder = ?`, state, name, holder)
	return n == 1, t.Wrap(err, "save job")
}

// ExtractedSeq returns the session's extraction mark (store.Extractions).
func (t *Tx) ExtractedSeq(ctx context.Context, owner, sessionID string) (int64, error) {
	var seq int64
	err := t.Conn.QueryRow(ctx, `SELECT seq FROM memory_extractions WHERE owner_id = ? AND session_id = ?`, owner, sessionID).Scan(&seq)
	if errors.Is(err, ErrNoRows) {
		return 0, nil
	}
	return seq, t.Wrap(err, "read extraction mark")
}

// SetExtracted moves the session's extraction mark from from to to: an upsert whose update
// applies only at from.
func (t *Tx) SetExtracted(ctx context.Context, owner, sessionID string, from, to, version int64, at time.Time) (bool, error) {
	if err := t.WritableBy(owner); err != nil {
		return false, err
	}
	n, err := t.Conn.Exec(ctx, `INSERT INTO memory_extractions (owner_id, session_id, seq, version, extracted_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (owner_id, session_id) DO UPDATE SET seq = excluded.seq, version = excluded.version, extracted_at = excluded.extracted_at
		WHERE memory_extractions.seq = ?`, owner, sessionID, to, version, Micros(at), from)
	if err == nil && n == 1 && from == 0 {
		// A first mark inserts; one at 0 that another call inserted meanwhile is not "at 0".
		var seq int64
		if err = t.Conn.QueryRow(ctx, `SELECT seq FROM memory_extractions WHERE owner_id = ? AND session_id = ?`, owner, sessionID).Scan(&seq); err == nil && seq != to {
			return false, nil
		}
	}
	return n == 1, t.Wrap(err, "move extraction mark")
}

// IdleUnextracted lists the idle sessions with turns after their extraction mark
// (store.Extractions) of users who learn facts: a scan of the sessions of one agent in a window
// of last activity.
func (t *Tx) IdleUnextracted(ctx context.Context, q store.IdleQuery) ([]store.IdleSession, error) {
	return scanAll(t, ctx, "idle sessions", func(r Row) (store.IdleSession, error) {
		var s store.IdleSession
		var at int64
		err := r.Scan(&s.OwnerID, &s.ID, &at)
		s.LastActiveAt = FromMicros(at)
		return s, err
	}, `SELECT s.owner_id, s.id, s.last_active_at FROM sessions s
		LEFT JOIN memory_extractions x ON x.owner_id = s.owner_id AND x.session_id = s.id
		WHERE s.agent = ? AND s.status = 'active' AND s.last_active_at >= ? AND s.last_active_at < ?
			AND s.last_seq > COALESCE(x.seq, 0)
			AND NOT EXISTS (SELECT 1 FROM user_settings u WHERE u.user_id = s.owner_id AND u.learn_facts = 0)
			AND (s.last_active_at > ? OR s.last_active_at = ? AND s.id > ?)
		ORDER BY s.last_active_at, s.id`+limitArg,
		q.Agent, Micros(q.Since), Micros(q.Before), Micros(q.AfterActive), Micros(q.AfterActive), q.AfterID, Limit(q.Limit))
}
