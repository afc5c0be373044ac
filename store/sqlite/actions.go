package sqlite

import (
	"context"
	"database/sql"

	"github.com/carryon-hub/carryon"
)

const actionCols = `id, run_id, session_id, step, idx, attempt, call_id, tool, args, effect, status, idempotency_key,
	fingerprint_before, fingerprint_after, result, error, started_at, finished_at`

// InsertAction journals a tool call of the owner's run. ECONFLICT when (run, step, index) or the
// id exists; ENOTFOUND when the run is not the owner's or not of a.SessionID.
func (t *tx) InsertAction(ctx context.Context, owner string, a *carryon.Action) error {
	if err := t.Writable(); err != nil {
		return err
	}
	if err := t.ownRunIn(ctx, owner, a.RunID, a.SessionID); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO actions (`+actionCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.RunID, a.SessionID, a.Step, a.Index, a.Attempt, a.CallID, a.Tool, nullText(a.Args),
		string(a.Effect), string(a.Status), a.IdempotencyKey, a.FingerprintBefore, a.FingerprintAfter, a.Result,
		a.Error, micros(a.StartedAt), nullMicros(a.FinishedAt))
	if err != nil {
		return conflict(err, "action %d of step %d of run %s exists", a.Index, a.Step, a.RunID)
	}
	return nil
}

// UpdateAction stores the action's status, attempt, fingerprints, result, error and finish time.
// ENOTFOUND when no action of the owner's run a.RunID has its id.
func (t *tx) UpdateAction(ctx context.Context, owner string, a *carryon.Action) error {
	if err := t.Writable(); err != nil {
		return err
	}
	res, err := t.tx.ExecContext(ctx, `UPDATE actions SET status = ?, attempt = ?, fingerprint_before = ?,
		fingerprint_after = ?, result = ?, error = ?, finished_at = ?
		WHERE id = ? AND run_id = ? AND run_id IN (SELECT id FROM runs WHERE id = ? AND owner_id = ?)`,
		string(a.Status), a.Attempt, a.FingerprintBefore, a.FingerprintAfter, a.Result, a.Error,
		nullMicros(a.FinishedAt), a.ID, a.RunID, a.RunID, owner)
	if err != nil {
		return wrap(err, "update action")
	}
	if n, err := res.RowsAffected(); err != nil {
		return wrap(err, "update action")
	} else if n == 0 {
		return notFound("action", a.ID)
	}
	return nil
}

// ListActions returns the owner's run's actions by step and index. ENOTFOUND when the run is not
// the owner's.
func (t *tx) ListActions(ctx context.Context, owner, runID string) ([]*carryon.Action, error) {
	if err := t.ownRun(ctx, owner, runID); err != nil {
		return nil, err
	}
	return t.queryActions(ctx, "list actions", `WHERE run_id = ? ORDER BY step, idx`, runID)
}

// StepActions returns the actions of one step of the owner's run by index. ENOTFOUND when the run
// is not the owner's.
func (t *tx) StepActions(ctx context.Context, owner, runID string, step int) ([]*carryon.Action, error) {
	if err := t.ownRun(ctx, owner, runID); err != nil {
		return nil, err
	}
	return t.queryActions(ctx, "step actions", `WHERE run_id = ? AND step = ? ORDER BY idx`, runID, step)
}

// RecentActions returns the session's last limit actions across its runs, newest first (started
// time, then step and index, descending). A limit of zero or less means no limit. ENOTFOUND when
// the session is not the owner's.
func (t *tx) RecentActions(ctx context.Context, owner, sessionID string, limit int) ([]*carryon.Action, error) {
	if _, err := t.ownLink(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	return t.queryActions(ctx, "recent actions", `WHERE session_id = ?
		ORDER BY started_at DESC, step DESC, idx DESC LIMIT ?`, sessionID, limitArg(limit))
}

func (t *tx) queryActions(ctx context.Context, op, query string, args ...any) ([]*carryon.Action, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT `+actionCols+` FROM actions `+query, args...)
	if err != nil {
		return nil, wrap(err, op)
	}
	defer rows.Close()
	var out []*carryon.Action
	for rows.Next() {
		var a carryon.Action
		var effect, status string
		var args sql.NullString
		var started int64
		var finished sql.NullInt64
		if err := rows.Scan(&a.ID, &a.RunID, &a.SessionID, &a.Step, &a.Index, &a.Attempt, &a.CallID, &a.Tool,
			&args, &effect, &status, &a.IdempotencyKey, &a.FingerprintBefore, &a.FingerprintAfter, &a.Result,
			&a.Error, &started, &finished); err != nil {
			return nil, wrap(err, op)
		}
		a.Args, a.Effect, a.Status = rawText(args), carryon.EffectClass(effect), carryon.ActionStatus(status)
		a.StartedAt, a.FinishedAt = fromMicros(started), timePtr(finished)
		out = append(out, &a)
	}
	return out, wrap(rows.Err(), op)
}
