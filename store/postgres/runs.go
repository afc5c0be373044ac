package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/store"
	"github.com/jackc/pgx/v5"
)

// The status lists below are spelled exactly as in the partial indexes of 0002_runs.sql, so the
// planner can prove a query's condition implies the index's.

const runCols = `id, session_id, owner_id, status, message, trigger_seq, request_id, model, multitask, step, attempt,
	lease_owner, lease_expires_at, stop_requested, reply, error, input_tokens, output_tokens, created_at,
	updated_at, started_at, finished_at, takeovers`

func scanRun(r scanner) (*carryon.Run, error) {
	var run carryon.Run
	var status string
	var lease, started, finished *int64
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
	rows, err := t.tx.Query(ctx, `SELECT `+runCols+` `+query, args...)
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
	err := t.tx.QueryRow(ctx, `SELECT 1 FROM runs WHERE id = $1 AND owner_id = $2`, id, owner).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound("run", id)
	}
	return wrap(err, "get run")
}

// ownRunIn checks that the run is the owner's and belongs to the session. ENOTFOUND.
func (t *tx) ownRunIn(ctx context.Context, owner, id, sessionID string) error {
	var one int
	err := t.tx.QueryRow(ctx, `SELECT 1 FROM runs WHERE id = $1 AND owner_id = $2 AND session_id = $3`,
		id, owner, sessionID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
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
	if err := t.ownSession(ctx, r.OwnerID, r.SessionID); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO runs (`+runCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
		$11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)`,
		r.ID, r.SessionID, r.OwnerID, string(r.Status), r.Message, r.TriggerSeq, r.RequestID, r.Model,
		r.Multitask, r.Step, r.Attempt, r.LeaseOwner, nullMicros(r.LeaseExpiresAt), r.StopRequested,
		r.Reply, r.Error, r.Usage.InputTokens, r.Usage.OutputTokens, micros(r.CreatedAt), micros(r.UpdatedAt),
		nullMicros(r.StartedAt), nullMicros(r.FinishedAt), r.Takeovers)
	if err != nil {
		return conflict(err, "run %s exists", r.ID)
	}
	return nil
}

// GetRun returns the owner's run. ENOTFOUND when missing or owned by someone else. Inside Write
// it locks the row until the transaction ends, like GetSession.
func (t *tx) GetRun(ctx context.Context, owner, id string) (*carryon.Run, error) {
	row := t.tx.QueryRow(ctx, `SELECT `+runCols+` FROM runs WHERE id = $1 AND owner_id = $2`+t.forWrite(), id, owner)
	r, err := scanRun(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("run", id)
	}
	return r, wrap(err, "get run")
}

// UpdateRun stores every mutable field of r (status, trigger seq, step, attempt, lease, stop
// request, reply, error, usage, updated/started/finished times) if the row is r.OwnerID's and at
// attempt prevAttempt. ENOTFOUND when missing or foreign; EFENCED when the attempt moved, and
// then nothing is written.
func (t *tx) UpdateRun(ctx context.Context, r *carryon.Run, prevAttempt int) error {
	if err := t.Writable(); err != nil {
		return err
	}
	tag, err := t.tx.Exec(ctx, `UPDATE runs SET status = $1, trigger_seq = $2, step = $3, attempt = $4,
		lease_owner = $5, lease_expires_at = $6, stop_requested = $7, reply = $8, error = $9, input_tokens = $10,
		output_tokens = $11, updated_at = $12, started_at = $13, finished_at = $14, takeovers = $15
		WHERE id = $16 AND owner_id = $17 AND attempt = $18`,
		string(r.Status), r.TriggerSeq, r.Step, r.Attempt, r.LeaseOwner, nullMicros(r.LeaseExpiresAt),
		r.StopRequested, r.Reply, r.Error, r.Usage.InputTokens, r.Usage.OutputTokens, micros(r.UpdatedAt),
		nullMicros(r.StartedAt), nullMicros(r.FinishedAt), r.Takeovers, r.ID, r.OwnerID, prevAttempt)
	if err != nil {
		return wrap(err, "update run")
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var current int
	var status string
	err = t.tx.QueryRow(ctx, `SELECT attempt, status FROM runs WHERE id = $1 AND owner_id = $2`,
		r.ID, r.OwnerID).Scan(&current, &status)
	if errors.Is(err, pgx.ErrNoRows) {
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
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	var a args
	query := `FROM runs WHERE session_id = ` + a.add(sessionID)
	if q.AfterID != "" {
		c, id := a.add(micros(q.AfterCreated)), a.add(q.AfterID)
		query += ` AND (created_at < ` + c + ` OR (created_at = ` + c + ` AND id < ` + id + `))`
	}
	query += ` ORDER BY created_at DESC, id DESC LIMIT ` + a.add(limitArg(q.Limit))
	return t.queryRuns(ctx, "list runs", query, a...)
}

// ActiveRuns returns the session's queued, running and waiting runs, oldest first. ENOTFOUND when
// the session is not the owner's.
func (t *tx) ActiveRuns(ctx context.Context, owner, sessionID string) ([]*carryon.Run, error) {
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	return t.queryRuns(ctx, "active runs", `FROM runs
		WHERE session_id = $1 AND status IN ('queued', 'running', 'waiting_approval')
		ORDER BY created_at, id`, sessionID)
}

// RunnableRuns returns, across owners and oldest first (created_at, id), up to limit runs a runner
// may take at now (in a write transaction: locked, skipping runs other transactions hold): each session's oldest queued run when no run of the session is running or
// waiting for approval, and every running run whose lease expired before now (a running run
// without a lease expiry is never taken over). A limit of zero or less means no limit.
func (t *tx) RunnableRuns(ctx context.Context, now time.Time, limit int) ([]*carryon.Run, error) {
	return t.queryRuns(ctx, "runnable runs", `FROM runs r
		WHERE r.status IN ('queued', 'running')
		AND ((r.status = 'running' AND r.lease_expires_at < $1)
			OR (r.status = 'queued' AND NOT EXISTS (SELECT 1 FROM runs o
				WHERE o.session_id = r.session_id AND o.status IN ('queued', 'running', 'waiting_approval')
				AND (o.status <> 'queued' OR o.created_at < r.created_at OR (o.created_at = r.created_at AND o.id < r.id)))))
		ORDER BY r.created_at, r.id LIMIT $2`+t.skipLocked(), micros(now), limitArg(limit))
}

// skipLocked is, in a write transaction, the clause that locks the runs a runner is about to
// claim and skips those another transaction holds, so that instances claiming at the same time
// take different runs.
func (t *tx) skipLocked() string {
	if t.forWrite() == "" {
		return ""
	}
	return " FOR NO KEY UPDATE OF r SKIP LOCKED"
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
	_, err := t.tx.Exec(ctx, `INSERT INTO checkpoints (run_id, step, message_seq, memory_version,
		pending_actions, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
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
	var pending *string
	var created int64
	err := t.tx.QueryRow(ctx, `SELECT step, message_seq, memory_version, pending_actions, created_at
		FROM checkpoints WHERE run_id = $1 ORDER BY step DESC LIMIT 1`, runID).Scan(&c.Step, &c.MessageSeq,
		&c.MemoryVersion, &pending, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, wrap(err, "last checkpoint")
	}
	if pending != nil {
		if err := json.Unmarshal([]byte(*pending), &c.PendingActions); err != nil {
			return nil, wrap(err, "decode pending actions")
		}
	}
	c.CreatedAt = fromMicros(created)
	return &c, nil
}
