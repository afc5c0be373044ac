package sqlq

import (
	"context"
	"errors"
	"time"

	"github.com/carryon-hub/carryon"
)

// LockUserBudget reads the user's budget and the largest call made under a hold, locking the
// budget row (Dialect.LockForUpdate) so that the checks of one user's calls take turns. Zero
// values when the user has no budget row.
func (t *Tx) LockUserBudget(ctx context.Context, userID string) (carryon.UserBudget, carryon.Spend, error) {
	var b carryon.UserBudget
	var peak carryon.Spend
	if err := t.Writable(); err != nil {
		return b, peak, err
	}
	var text string
	err := t.Conn.QueryRow(ctx, `SELECT budget, peak_tokens, peak_cost FROM user_budgets WHERE user_id = ?`+t.d.LockForUpdate,
		userID).Scan(&text, &peak.Tokens, &peak.Cost)
	if errors.Is(err, ErrNoRows) {
		return b, peak, nil
	} else if err != nil {
		return b, peak, t.Wrap(err, "lock user budget")
	}
	peak.USD = peak.Cost.USD()
	b, err = parseUserBudget(userID, text)
	return b, peak, err
}

// BudgetHolds adds up the owner's holds that count at now (their run running under a lease
// that ends after now), but for exceptRun's, and counts them.
func (t *Tx) BudgetHolds(ctx context.Context, owner, exceptRun string, now time.Time) (carryon.Spend, int, error) {
	var s carryon.Spend
	var n int
	err := t.Conn.QueryRow(ctx, `SELECT count(*), coalesce(sum(h.tokens), 0), coalesce(sum(h.cost), 0)
		FROM budget_holds h JOIN runs r ON r.id = h.run_id
		WHERE h.owner_id = ? AND h.run_id <> ? AND r.status = 'running' AND r.lease_expires_at >= ?`,
		owner, exceptRun, Micros(now)).Scan(&n, &s.Tokens, &s.Cost)
	if err != nil {
		return s, 0, t.Wrap(err, "read budget holds")
	}
	s.USD = s.Cost.USD()
	return s, n, nil
}

// PutBudgetHold takes or replaces run's hold standing for s, and deletes the owner's holds that
// no longer count at now (a run that ended, or whose runner's lease ran out, without releasing).
func (t *Tx) PutBudgetHold(ctx context.Context, owner, runID string, s carryon.Spend, now time.Time) error {
	if err := t.Writable(); err != nil {
		return err
	}
	if _, err := t.Conn.Exec(ctx, `DELETE FROM budget_holds WHERE owner_id = ? AND NOT EXISTS (SELECT 1 FROM runs r
		WHERE r.id = budget_holds.run_id AND r.status = 'running' AND r.lease_expires_at >= ?)`, owner, Micros(now)); err != nil {
		return t.Wrap(err, "delete stale budget holds")
	}
	_, err := t.Conn.Exec(ctx, `INSERT INTO budget_holds (run_id, owner_id, tokens, cost) VALUES (?, ?, ?, ?)
		ON CONFLICT (run_id) DO UPDATE SET tokens = excluded.tokens, cost = excluded.cost`,
		runID, owner, s.Tokens, int64(s.Cost))
	return t.Wrap(err, "put budget hold")
}

// ReleaseBudgetHold deletes run's hold and raises the user's peak to c, the call it stood for
// (nil when the call spent nothing).
func (t *Tx) ReleaseBudgetHold(ctx context.Context, owner, runID string, c *carryon.ModelCall) error {
	if err := t.Writable(); err != nil {
		return err
	}
	if _, err := t.Conn.Exec(ctx, `DELETE FROM budget_holds WHERE run_id = ? AND owner_id = ?`, runID, owner); err != nil {
		return t.Wrap(err, "release budget hold")
	}
	if c == nil {
		return nil
	}
	tokens, cost := c.InputTokens+c.OutputTokens, int64(c.Cost)
	_, err := t.Conn.Exec(ctx, `UPDATE user_budgets SET
		peak_tokens = CASE WHEN peak_tokens < ? THEN ? ELSE peak_tokens END,
		peak_cost = CASE WHEN peak_cost < ? THEN ? ELSE peak_cost END
		WHERE user_id = ? AND (peak_tokens < ? OR peak_cost < ?)`,
		tokens, tokens, cost, cost, owner, tokens, cost)
	return t.Wrap(err, "raise budget peak")
}
