package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/store"
)

// The status lists below are spelled exactly as in the partial indexes of 0002_runs.sql: SQLite
// uses a partial index only when the query's WHERE clause contains the index's condition.

const runCols = `id, session_id, owner_id, status, message, trigger_seq, request_id, model, multitask, step, attempt,
	lease_owner, lease_expires_at, stop_requested, reply, error, input_tokens, output_tokens, created_at,
	updated_at, started_at, finished_at, takeovers`

func scanRun(r scanner) (*carryon.Run, error) {
	var run carryon.Run
	var status string
	var lease, started, finished sql.NullInt64
	var created, updated int64
	err := r.Scan(&run.ID, &run.SessionID, &run.OwnerID, &status, &run.Message, &run.TriggerSeq, &run.RequestID, &run.Model,
		&run.Multitask, &run.Step, &run.Attempt, &run.LeaseOwner, &lease, &run.StopRequested, &run.Reply,
		&run.Error, &run.Usage.InputTokens, &run.Usage.OutputTokens, &created, &updated, &started, &finished, &run.Takeovers)
	if err != nil {
		return nil, err
	}
	run.Status = carryon.RunStatus(status)
	run.LeaseExpiresAt, run.StartedAt, run.FinishedAt = timePtr(lease), timePtr(started), timePtr(finished)
	run.CreatedAt, run.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &run, nil
}

// queryRuns reads the runs a query selects; query starts after the select list.
func (t *tx) queryRuns(ctx context.Context, op, query string, args ...any) ([]*carryon.Run, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT `+runCols+` `+query, args...)
	if err != nil {
		return nil, wrap(err, op)
	}
	defer rows.Close()
	var out []*carryon.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, wrap(err, op)
		}
		out = append(out, r)
	}
	return out, wrap(rows.Err(), op)
}

// ownRun checks that the run exists and is the owner's. ENOTFOUND.
func (t *tx) ownRun(ctx context.Context, owner, id string) error {
	var one int
	err := t.tx.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE id = ? AND owner_id = ?`, id, owner).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound("run", id)
	}
	return wrap(err, "get run")
}

// ownRunIn checks that the run is the owner's and belongs to the session. ENOTFOUND.
func (t *tx) ownRunIn(ctx context.Context, owner, id, sessionID string) error {
	var one int
	err := t.tx.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE id = ? AND owner_id = ? AND session_id = ?`,
		id, owner, sessionID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound("run", id)
	}
	return wrap(err, "get run")
}

// InsertRun stores a new run. ENOTFOUND when the session is not r.OwnerID's; ECONFLICT when the
// id exists.
func (t *tx) InsertRun(ctx context.Context, r *carryon.Run) error {
	if err := t.Writable(); err != nil {
		return err
	}
	if _, err := t.ownLink(ctx, r.OwnerID, r.SessionID); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO runs (`+runCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.SessionID, r.OwnerID, string(r.Status), r.Message, r.TriggerSeq, r.RequestID, r.Model, r.Multitask, r.Step,
		r.Attempt, r.LeaseOwner, nullMicros(r.LeaseExpiresAt), r.StopRequested, r.Reply, r.Error,
		r.Usage.InputTokens, r.Usage.OutputTokens, micros(r.CreatedAt), micros(r.UpdatedAt),
		nullMicros(r.StartedAt), nullMicros(r.FinishedAt), r.Takeovers)
	if err != nil {
		return conflict(err, "run %s exists", r.ID)
	}
	return nil
}

// GetRun returns the owner's run. ENOTFOUND when missing or owned by someone else.
func (t *tx) GetRun(ctx context.Context, owner, id string) (*carryon.Run, error) {
	row := t.tx.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs WHERE id = ? AND owner_id = ?`, id, owner)
	r, err := scanRun(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("run", id)
	}
	return r, wrap(err, "get run")
}

// UpdateRun stores every mutable field of r (status, trigger seq, step, attempt, lease, stop request, reply,
// error, usage, updated/started/finished times) if the row is r.OwnerID's and at attempt
// prevAttempt. ENOTFOUND when missing or foreign; EFENCED when the attempt moved, and then nothing
// is written.
func (t *tx) UpdateRun(ctx context.Context, r *carryon.Run, prevAttempt int) error {
	if err := t.Writable(); err != nil {
		return err
	}
	res, err := t.tx.ExecContext(ctx, `UPDATE runs SET status = ?, trigger_seq = ?, step = ?, attempt = ?, lease_owner = ?,
		lease_expires_at = ?, stop_requested = ?, reply = ?, error = ?, input_tokens = ?, output_tokens = ?,
		updated_at = ?, started_at = ?, finished_at = ?, takeovers = ?
		WHERE id = ? AND owner_id = ? AND attempt = ?`,
		string(r.Status), r.TriggerSeq, r.Step, r.Attempt, r.LeaseOwner, nullMicros(r.LeaseExpiresAt), r.StopRequested, r.Reply,
		r.Error, r.Usage.InputTokens, r.Usage.OutputTokens, micros(r.UpdatedAt), nullMicros(r.StartedAt),
		nullMicros(r.FinishedAt), r.Takeovers, r.ID, r.OwnerID, prevAttempt)
	if err != nil {
		return wrap(err, "update run")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return wrap(err, "update run")
	}
	if n == 1 {
		return nil
	}
	var current int
	var status string
	err = t.tx.QueryRowContext(ctx, `SELECT attempt, status FROM runs WHERE id = ? AND owner_id = ?`,
		r.ID, r.OwnerID).Scan(&current, &status)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound("run", r.ID)
	} else if err != nil {
		return wrap(err, "update run")
	}
	return carryon.Errorf(carryon.EFENCED, "run %s is at attempt %d (%s); a write of attempt %d is refused",
		r.ID, current, status, prevAttempt)
}

// ListRuns returns a page of the owner's session's runs by (created_at, id) descending. A Limit of
// zero or less means no limit. ENOTFOUND when the session is not the owner's.
func (t *tx) ListRuns(ctx context.Context, owner, sessionID string, q store.RunQuery) ([]*carryon.Run, error) {
	if _, err := t.ownLink(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	query := `FROM runs WHERE session_id = ?`
	args := []any{sessionID}
	if q.AfterID != "" {
		a := micros(q.AfterCreated)
		query += ` AND (created_at < ? OR (created_at = ? AND id < ?))`
		args = append(args, a, a, q.AfterID)
	}
	query += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	args = append(args, limitArg(q.Limit))
	return t.queryRuns(ctx, "list runs", query, args...)
}

// ActiveRuns returns the session's queued, running and waiting runs, oldest first. ENOTFOUND when
// the session is not the owner's.
func (t *tx) ActiveRuns(ctx context.Context, owner, sessionID string) ([]*carryon.Run, error) {
	if _, err := t.ownLink(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	return t.queryRuns(ctx, "active runs", `FROM runs
		WHERE session_id = ? AND status IN ('queued', 'running', 'waiting_approval')
		ORDER BY created_at, id`, sessionID)
}

// RunnableRuns returns, across owners and oldest first (created_at, id), up to limit runs a runner
// may take at now: each session's oldest queued run when no run of the session is running or
// waiting for approval, and every running run whose lease expired before now (a running run
// without a lease expiry is never taken over). A limit of zero or less means no limit.
func (t *tx) RunnableRuns(ctx context.Context, now time.Time, limit int) ([]*carryon.Run, error) {
	return t.queryRuns(ctx, "runnable runs", `FROM runs r
		WHERE r.status IN ('queued', 'running')
		AND ((r.status = 'running' AND r.lease_expires_at < ?)
			OR (r.status = 'queued' AND NOT EXISTS (SELECT 1 FROM runs o
				WHERE o.session_id = r.session_id AND o.status IN ('queued', 'running', 'waiting_approval')
				AND (o.status <> 'queued' OR o.created_at < r.created_at OR (o.created_at = r.created_at AND o.id < r.id)))))
		ORDER BY r.created_at, r.id LIMIT ?`, micros(now), limitArg(limit))
}

// InsertCheckpoint stores a step's checkpoint of the owner's run. ECONFLICT when the step has
// one; ENOTFOUND when the run is not the owner's.
func (t *tx) InsertCheckpoint(ctx context.Context, owner string, c *carryon.Checkpoint) error {
	if err := t.Writable(); err != nil {
		return err
	}
	if err := t.ownRun(ctx, owner, c.RunID); err != nil {
		return err
	}
	var pending []byte
	if len(c.PendingActions) > 0 {
		var err error
		if pending, err = json.Marshal(c.PendingActions); err != nil {
			return wrap(err, "encode pending actions")
		}
	}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO checkpoints (run_id, step, message_seq, memory_version,
		pending_actions, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		c.RunID, c.Step, c.MessageSeq, c.MemoryVersion, nullText(pending), micros(c.CreatedAt))
	if err != nil {
		return conflict(err, "step %d of run %s has a checkpoint", c.Step, c.RunID)
	}
	return nil
}

// LastCheckpoint returns the owner's run's checkpoint with the highest step, or nil when it has
// none. ENOTFOUND when the run is not the owner's.
func (t *tx) LastCheckpoint(ctx context.Context, owner, runID string) (*carryon.Checkpoint, error) {
	if err := t.ownRun(ctx, owner, runID); err != nil {
		return nil, err
	}
	c := carryon.Checkpoint{RunID: runID}
	var pending sql.NullString
	var created int64
	err := t.tx.QueryRowContext(ctx, `SELECT step, message_seq, memory_version, pending_actions, created_at
		FROM checkpoints WHERE run_id = ? ORDER BY step DESC LIMIT 1`, runID).Scan(&c.Step, &c.MessageSeq,
		&c.MemoryVersion, &pending, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, wrap(err, "last checkpoint")
	}
	if pending.Valid {
		if err := json.Unmarshal([]byte(pending.String), &c.PendingActions); err != nil {
			return nil, wrap(err, "decode pending actions")
		}
	}
	c.CreatedAt = fromMicros(created)
	return &c, nil
}
