package sqlq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// The status lists below are spelled exactly as in the partial indexes of 0002_runs.sql (in both
// drivers' migrations): PostgreSQL's planner must prove that a query's condition implies the
// index's, and SQLite uses a partial index only when the query's WHERE clause contains its
// condition.

const runCols = `id, session_id, owner_id, status, message, trigger_seq, request_id, model, multitask, step, attempt,
	lease_owner, lease_expires_at, stop_requested, reply, error, input_tokens, output_tokens, created_at,
	updated_at, started_at, finished_at, takeovers, tools, agent, agent_digest, compact_threshold, door, budget_stop`

func scanRun(r Row) (*carryon.Run, error) {
	var run carryon.Run
	var status string
	var lease, started, finished *int64
	var created, updated int64
	var tools *string
	var door, stop string
	err := r.Scan(&run.ID, &run.SessionID, &run.OwnerID, &status, &run.Message, &run.TriggerSeq, &run.RequestID, &run.Model,
		&run.Multitask, &run.Step, &run.Attempt, &run.LeaseOwner, &lease, &run.StopRequested, &run.Reply,
		&run.Error, &run.Usage.InputTokens, &run.Usage.OutputTokens, &created, &updated, &started, &finished, &run.Takeovers, &tools, &run.Agent, &run.AgentDigest, &run.CompactThreshold, &door, &stop)
	if err != nil {
		return nil, err
	}
	if tools != nil {
		if err := json.Unmarshal([]byte(*tools), &run.Tools); err != nil {
			return nil, fmt.Errorf("run %s: stored tools: %w", run.ID, err)
		}
	}
	if stop != "" {
		run.BudgetStop = new(carryon.BudgetStop)
		if err := json.Unmarshal([]byte(stop), run.BudgetStop); err != nil {
			return nil, fmt.Errorf("run %s: stored budget stop: %w", run.ID, err)
		}
	}
	run.Status, run.Door = carryon.RunStatus(status), carryon.Door(door)
	run.LeaseExpiresAt, run.StartedAt, run.FinishedAt = TimePtr(lease), TimePtr(started), TimePtr(finished)
	run.CreatedAt, run.UpdatedAt = FromMicros(created), FromMicros(updated)
	return &run, nil
}

// queryRuns reads the runs a query selects; query starts after the select list.
func (t *Tx) queryRuns(ctx context.Context, op, query string, args ...any) ([]*carryon.Run, error) {
	return scanAll(t, ctx, op, scanRun, `SELECT `+runCols+` `+query, args...)
}

// ownRun checks that the run exists and is the owner's, reading its row with lock appended (a
// row-locking clause or ""). ENOTFOUND.
func (t *Tx) ownRun(ctx context.Context, owner, id, lock string) error {
	var one int
	err := t.Conn.QueryRow(ctx, `SELECT 1 FROM runs WHERE id = ? AND owner_id = ?`+lock, id, owner).Scan(&one)
	if errors.Is(err, ErrNoRows) {
		return NotFound("run", id)
	}
	return t.Wrap(err, "get run")
}

// InsertRun stores a new run. ENOTFOUND when the session is not r.OwnerID's; ECONFLICT when the
// id exists.
func (t *Tx) InsertRun(ctx context.Context, r *carryon.Run) error {
	if err := t.Writable(); err != nil {
		return err
	}
	if err := t.ownSession(ctx, r.OwnerID, r.SessionID); err != nil {
		return err
	}
	_, err := t.Conn.Exec(ctx, `INSERT INTO runs (`+runCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.SessionID, r.OwnerID, string(r.Status), r.Message, r.TriggerSeq, r.RequestID, r.Model,
		r.Multitask, r.Step, r.Attempt, r.LeaseOwner, NullMicros(r.LeaseExpiresAt), r.StopRequested,
		r.Reply, r.Error, r.Usage.InputTokens, r.Usage.OutputTokens, Micros(r.CreatedAt), Micros(r.UpdatedAt),
		NullMicros(r.StartedAt), NullMicros(r.FinishedAt), r.Takeovers, toolsText(r.Tools), r.Agent, r.AgentDigest, r.CompactThreshold, string(r.Door), budgetStopText(r.BudgetStop))
	return t.Conflict(err, "insert run", "run %s exists", r.ID)
}

// budgetStopText is the stored form of a run's budget stop: its JSON, or ” for none.
func budgetStopText(b *carryon.BudgetStop) string {
	if b == nil {
		return ""
	}
	out, err := json.Marshal(b)
	if err != nil {
		return "" // not reached: a BudgetStop always encodes
	}
	return string(out)
}

// toolsText is the stored form of a run's client tools: a JSON array, or NULL for none.
func toolsText(tools []carryon.ClientTool) any {
	if len(tools) == 0 {
		return nil
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return nil // not reached: the tools were decoded from JSON
	}
	return string(b)
}

// GetRun returns the owner's run. ENOTFOUND when missing or owned by someone else. Inside Write
// it locks the row until the transaction ends, like GetSession.
func (t *Tx) GetRun(ctx context.Context, owner, id string) (*carryon.Run, error) {
	r, err := scanRun(t.Conn.QueryRow(ctx, `SELECT `+runCols+` FROM runs WHERE id = ? AND owner_id = ?`+
		t.lockIfWriting(t.d.LockForUpdate), id, owner))
	if errors.Is(err, ErrNoRows) {
		return nil, NotFound("run", id)
	}
	return r, t.Wrap(err, "get run")
}

// UpdateRun stores every mutable field of r (status, trigger seq, step, attempt, lease, stop
// request, reply, error, usage, updated/started/finished times, model, agent digest and budget stop) if the row is r.OwnerID's and at
// attempt prevAttempt. ENOTFOUND when missing or foreign; EFENCED when the attempt moved, and
// then nothing is written.
func (t *Tx) UpdateRun(ctx context.Context, r *carryon.Run, prevAttempt int) error {
	if err := t.Writable(); err != nil {
		return err
	}
	n, err := t.Conn.Exec(ctx, `UPDATE runs SET status = ?, trigger_seq = ?, step = ?, attempt = ?,
		lease_owner = ?, lease_expires_at = ?, stop_requested = ?, reply = ?, error = ?, input_tokens = ?,
		output_tokens = ?, updated_at = ?, started_at = ?, finished_at = ?, takeovers = ?, model = ?, agent_digest = ?, budget_stop = ?
		WHERE id = ? AND owner_id = ? AND attempt = ?`,
		string(r.Status), r.TriggerSeq, r.Step, r.Attempt, r.LeaseOwner, NullMicros(r.LeaseExpiresAt),
		r.StopRequested, r.Reply, r.Error, r.Usage.InputTokens, r.Usage.OutputTokens, Micros(r.UpdatedAt),
		NullMicros(r.StartedAt), NullMicros(r.FinishedAt), r.Takeovers, r.Model, r.AgentDigest, budgetStopText(r.BudgetStop), r.ID, r.OwnerID, prevAttempt)
	if err != nil {
		return t.Wrap(err, "update run")
	}
	if n == 1 {
		return nil
	}
	var current int
	var status string
	err = t.Conn.QueryRow(ctx, `SELECT attempt, status FROM runs WHERE id = ? AND owner_id = ?`,
		r.ID, r.OwnerID).Scan(&current, &status)
	if errors.Is(err, ErrNoRows) {
		return NotFound("run", r.ID)
	} else if err != nil {
		return t.Wrap(err, "update run")
	}
	return carryon.Errorf(carryon.EFENCED, "run %s is at attempt %d (%s); a write of attempt %d is refused",
		r.ID, current, status, prevAttempt)
}

// ListRuns returns a page of the owner's session's runs by (created_at, id) descending. A Limit of
// zero or less means no limit; a read budget in ctx may stop the page earlier. ENOTFOUND when the
// session is not the owner's.
func (t *Tx) ListRuns(ctx context.Context, owner, sessionID string, q store.RunQuery) ([]*carryon.Run, error) {
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	query := `FROM runs WHERE session_id = ?`
	args := []any{sessionID}
	if q.AfterID != "" {
		query += ` AND (created_at < ? OR (created_at = ? AND id < ?))`
		args = append(args, Micros(q.AfterCreated), Micros(q.AfterCreated), q.AfterID)
	}
	query += ` ORDER BY created_at DESC, id DESC` + limitArg
	runs, err := scanWithin(t, ctx, "list runs", scanRun, runSize, `SELECT `+runCols+` `+query, append(args, Limit(q.Limit))...)
	if errors.Is(err, store.ErrBudgetSpent) {
		err = nil // a read budget (store.WithReadBudget) stopped the page: the caller pages on
	}
	return runs, err
}

// runSize is what a run counts against a read budget: its texts, and a little for the rest.
func runSize(r *carryon.Run) int64 {
	return int64(len(r.Message)+len(r.Reply)+len(r.Error)) + 512
}

// ActiveRuns returns the session's queued, running and waiting runs, oldest first. ENOTFOUND when
// the session is not the owner's.
func (t *Tx) ActiveRuns(ctx context.Context, owner, sessionID string) ([]*carryon.Run, error) {
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	return t.queryRuns(ctx, "active runs", `FROM runs
		WHERE session_id = ? AND status IN ('queued', 'running', 'waiting_approval', 'requires_action')
		ORDER BY created_at, id`, sessionID)
}

// RunnableRuns returns, across owners and oldest first (created_at, id), up to limit runs a runner
// may take at now: each session's oldest queued run when no run of the session is running or
// waiting for approval, and every running run whose lease expired before now (a running run
// without a lease expiry is never taken over). In a write transaction it reads them with
// Dialect.LockToClaim (locked, skipping runs other transactions hold). A limit of zero or less
// means no limit.
func (t *Tx) RunnableRuns(ctx context.Context, now time.Time, limit int) ([]*carryon.Run, error) {
	return t.queryRuns(ctx, "runnable runs", `FROM runs r
		WHERE r.status IN ('queued', 'running')
		AND ((r.status = 'running' AND r.lease_expires_at < ?)
			OR (r.status = 'queued' AND NOT EXISTS (SELECT 1 FROM runs o
				WHERE o.session_id = r.session_id AND o.status IN ('queued', 'running', 'waiting_approval', 'requires_action')
				AND (o.status <> 'queued' OR o.created_at < r.created_at OR (o.created_at = r.created_at AND o.id < r.id)))))
		ORDER BY r.created_at, r.id`+limitArg+t.lockIfWriting(t.d.LockToClaim), Micros(now), Limit(limit))
}

// ActiveRunCounts counts the runs in each active state, across owners. The condition is the
// runs_active index's, so both databases count from that partial index.
func (t *Tx) ActiveRunCounts(ctx context.Context) (map[carryon.RunStatus]int64, error) {
	rows, err := t.Conn.Query(ctx, `SELECT status, COUNT(*) FROM runs
		WHERE status IN ('queued', 'running', 'waiting_approval', 'requires_action') GROUP BY status`)
	if err != nil {
		return nil, t.Wrap(err, "count active runs")
	}
	defer rows.Close()
	out := map[carryon.RunStatus]int64{}
	for rows.Next() {
		var status string
		var n int64
		if err := rows.Scan(&status, &n); err != nil {
			return nil, t.Wrap(err, "count active runs")
		}
		out[carryon.RunStatus(status)] = n
	}
	return out, t.Wrap(rows.Err(), "count active runs")
}

// StaleRequiresAction returns, across owners and oldest first, up to limit runs in requires_action
// whose updated_at is before before. A limit of zero or less means no limit.
func (t *Tx) StaleRequiresAction(ctx context.Context, before time.Time, limit int) ([]*carryon.Run, error) {
	return t.queryRuns(ctx, "stale requires_action runs", `FROM runs WHERE status = 'requires_action' AND updated_at < ?
		ORDER BY updated_at, id`+limitArg, Micros(before), Limit(limit))
}
