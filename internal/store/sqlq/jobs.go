package sqlq

import (
	"context"
	"time"
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
