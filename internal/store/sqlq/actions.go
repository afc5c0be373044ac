package sqlq

import (
	"context"
	"errors"

	"github.com/carryon-hub/carryon"
)

const actionCols = `id, run_id, session_id, step, idx, attempt, call_id, tool, args, effect, status, idempotency_key,
	fingerprint_before, fingerprint_after, result, error, started_at, finished_at, executor, approval, original_args`

// InsertAction journals a tool call of the owner's run. ECONFLICT when (run, step, index) or the
// id exists; ENOTFOUND when the run is not the owner's or not of a.SessionID.
func (t *Tx) InsertAction(ctx context.Context, owner string, a *carryon.Action) error {
	if err := t.Writable(); err != nil {
		return err
	}
	var one int
	err := t.Conn.QueryRow(ctx, `SELECT 1 FROM runs WHERE id = ? AND owner_id = ? AND session_id = ?`,
		a.RunID, owner, a.SessionID).Scan(&one)
	if errors.Is(err, ErrNoRows) {
		return NotFound("run", a.RunID)
	} else if err != nil {
		return t.Wrap(err, "get run")
	}
	_, err = t.Conn.Exec(ctx, `INSERT INTO actions (`+actionCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.RunID, a.SessionID, a.Step, a.Index, a.Attempt, a.CallID, a.Tool, NullText(a.Args),
		string(a.Effect), string(a.Status), a.IdempotencyKey, a.FingerprintBefore, a.FingerprintAfter, a.Result,
		a.Error, Micros(a.StartedAt), NullMicros(a.FinishedAt), a.Executor, a.Approval, NullText(a.OriginalArgs))
	return t.Conflict(err, "insert action", "action %d of step %d of run %s exists", a.Index, a.Step, a.RunID)
}

// UpdateAction stores the action's status, attempt, arguments, approval, fingerprints, result,
// error and finish time. ENOTFOUND when no action of the owner's run a.RunID has its id.
func (t *Tx) UpdateAction(ctx context.Context, owner string, a *carryon.Action) error {
	if err := t.Writable(); err != nil {
		return err
	}
	n, err := t.Conn.Exec(ctx, `UPDATE actions SET status = ?, attempt = ?, fingerprint_before = ?,
		fingerprint_after = ?, result = ?, error = ?, finished_at = ?, args = ?, approval = ?, original_args = ?
		WHERE id = ? AND run_id = ? AND run_id IN (SELECT id FROM runs WHERE id = ? AND owner_id = ?)`,
		string(a.Status), a.Attempt, a.FingerprintBefore, a.FingerprintAfter, a.Result, a.Error,
		NullMicros(a.FinishedAt), NullText(a.Args), a.Approval, NullText(a.OriginalArgs), a.ID, a.RunID, a.RunID, owner)
	if err != nil {
		return t.Wrap(err, "update action")
	}
	if n == 0 {
		return NotFound("action", a.ID)
	}
	return nil
}

// ListActions returns the owner's run's actions by step and index. ENOTFOUND when the run is not
// the owner's.
func (t *Tx) ListActions(ctx context.Context, owner, runID string) ([]*carryon.Action, error) {
	if err := t.ownRun(ctx, owner, runID, ""); err != nil {
		return nil, err
	}
	return t.queryActions(ctx, "list actions", `WHERE run_id = ? ORDER BY step, idx`, runID)
}

// StepActions returns the actions of one step of the owner's run by index. ENOTFOUND when the run
// is not the owner's.
func (t *Tx) StepActions(ctx context.Context, owner, runID string, step int) ([]*carryon.Action, error) {
	if err := t.ownRun(ctx, owner, runID, ""); err != nil {
		return nil, err
	}
	return t.queryActions(ctx, "step actions", `WHERE run_id = ? AND step = ? ORDER BY idx`, runID, step)
}

// RecentActions returns the session's last limit actions across its runs, newest first (started
// time, then step and index, descending). A limit of zero or less means no limit. ENOTFOUND when
// the session is not the owner's.
func (t *Tx) RecentActions(ctx context.Context, owner, sessionID string, limit int) ([]*carryon.Action, error) {
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	return t.queryActions(ctx, "recent actions", `WHERE session_id = ?
		ORDER BY started_at DESC, step DESC, idx DESC`+limitArg, sessionID, Limit(limit))
}

// LastToolAction returns the newest action of the tool called name in the owner's session that
// recorded a fingerprint after its call (newest by start time, then step and index), or nil when
// there is none: a tool that keeps its state in the journal finds it there (an A2A agent's tool,
// its remote contextId). The session's index is read newest first and the scan stops at the
// first match. ENOTFOUND when the session is not the owner's.
func (t *Tx) LastToolAction(ctx context.Context, owner, sessionID, name string) (*carryon.Action, error) {
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	acts, err := t.queryActions(ctx, "last tool action", `WHERE session_id = ? AND tool = ? AND fingerprint_after <> ''
		ORDER BY started_at DESC, step DESC, idx DESC LIMIT 1`, sessionID, name)
	if err != nil || len(acts) == 0 {
		return nil, err
	}
	return acts[0], nil
}

func (t *Tx) queryActions(ctx context.Context, op, query string, args ...any) ([]*carryon.Action, error) {
	return scanAll(t, ctx, op, func(r Row) (*carryon.Action, error) {
		var a carryon.Action
		var effect, status string
		var args, original *string
		var started int64
		var finished *int64
		if err := r.Scan(&a.ID, &a.RunID, &a.SessionID, &a.Step, &a.Index, &a.Attempt, &a.CallID, &a.Tool,
			&args, &effect, &status, &a.IdempotencyKey, &a.FingerprintBefore, &a.FingerprintAfter, &a.Result,
			&a.Error, &started, &finished, &a.Executor, &a.Approval, &original); err != nil {
			return nil, err
		}
		a.Args, a.Effect, a.Status = RawText(args), carryon.EffectClass(effect), carryon.ActionStatus(status)
		a.OriginalArgs = RawText(original)
		a.StartedAt, a.FinishedAt = FromMicros(started), TimePtr(finished)
		return &a, nil
	}, `SELECT `+actionCols+` FROM actions `+query, args...)
}
