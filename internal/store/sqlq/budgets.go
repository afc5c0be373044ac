package sqlq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/carryon-hub/carryon"
)

const spendCols = `model, calls, input_tokens, output_tokens, cached_tokens, cost`

func scanModelSpend(r Row) (carryon.ModelSpend, error) {
	var m carryon.ModelSpend
	err := r.Scan(&m.Model, &m.Calls, &m.InputTokens, &m.OutputTokens, &m.CachedTokens, &m.Cost)
	m.USD = m.Cost.USD()
	return m, err
}

// spendUpsert adds a call to a counter row; the conflict target is the table's primary key.
const spendUpsert = ` VALUES (?, ?, ?, 1, ?, ?, ?, ?)
	ON CONFLICT (%s) DO UPDATE SET calls = %[2]s.calls + 1,
	input_tokens = %[2]s.input_tokens + excluded.input_tokens, output_tokens = %[2]s.output_tokens + excluded.output_tokens,
	cached_tokens = %[2]s.cached_tokens + excluded.cached_tokens, cost = %[2]s.cost + excluded.cost`

// RecordSpend adds one model call to its session's counters (per model and per UTC day of at)
// and to those of the owner's UTC day and month of at: four upserts in the caller's transaction. ENOTFOUND when the session is not
// the owner's.
func (t *Tx) RecordSpend(ctx context.Context, owner, sessionID string, c carryon.ModelCall, at time.Time) error {
	if err := t.Writable(); err != nil {
		return err
	}
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return err
	}
	if _, err := t.Conn.Exec(ctx, `INSERT INTO session_spend (session_id, model, owner_id, calls, input_tokens, output_tokens, cached_tokens, cost)`+
		fmt.Sprintf(spendUpsert, "session_id, model", "session_spend"),
		sessionID, c.Model, owner, c.InputTokens, c.OutputTokens, c.CachedTokens, int64(c.Cost)); err != nil {
		return t.Wrap(err, "record session spend")
	}
	if _, err := t.Conn.Exec(ctx, `INSERT INTO session_spend_days (session_id, day, owner_id, calls, input_tokens, output_tokens, cached_tokens, cost)`+
		fmt.Sprintf(spendUpsert, "session_id, day", "session_spend_days"),
		sessionID, carryon.Day(at), owner, c.InputTokens, c.OutputTokens, c.CachedTokens, int64(c.Cost)); err != nil {
		return t.Wrap(err, "record session spend per day")
	}
	for _, period := range []string{carryon.Day(at), carryon.Month(at)} {
		if _, err := t.Conn.Exec(ctx, `INSERT INTO user_spend (user_id, period, model, calls, input_tokens, output_tokens, cached_tokens, cost)`+
			fmt.Sprintf(spendUpsert, "user_id, period, model", "user_spend"),
			owner, period, c.Model, c.InputTokens, c.OutputTokens, c.CachedTokens, int64(c.Cost)); err != nil {
			return t.Wrap(err, "record user spend")
		}
	}
	return nil
}

// SessionSpend returns the session's counters by model. ENOTFOUND when not the owner's.
func (t *Tx) SessionSpend(ctx context.Context, owner, sessionID string) ([]carryon.ModelSpend, error) {
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	return scanAll(t, ctx, "session spend", scanModelSpend, `SELECT `+spendCols+` FROM session_spend
		WHERE session_id = ? AND owner_id = ? ORDER BY model`, sessionID, owner)
}

// UserSpend returns the user's counters of a period by model.
func (t *Tx) UserSpend(ctx context.Context, userID, period string) ([]carryon.ModelSpend, error) {
	return scanAll(t, ctx, "user spend", scanModelSpend, `SELECT `+spendCols+` FROM user_spend
		WHERE user_id = ? AND period = ? ORDER BY model`, userID, period)
}

// SessionBudget returns the session's budget, nil for none. ENOTFOUND when not the owner's.
func (t *Tx) SessionBudget(ctx context.Context, owner, sessionID string) (*carryon.Budget, error) {
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	var text string
	err := t.Conn.QueryRow(ctx, `SELECT budget FROM session_budgets WHERE session_id = ? AND owner_id = ?`, sessionID, owner).Scan(&text)
	if errors.Is(err, ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, t.Wrap(err, "get session budget")
	}
	var b carryon.Budget
	if err := json.Unmarshal([]byte(text), &b); err != nil {
		return nil, fmt.Errorf("session %s: stored budget: %w", sessionID, err)
	}
	return &b, nil
}

// PutSessionBudget replaces the session's budget; nil or an empty one deletes it. ENOTFOUND.
func (t *Tx) PutSessionBudget(ctx context.Context, owner, sessionID string, b *carryon.Budget, at time.Time) error {
	if err := t.Writable(); err != nil {
		return err
	}
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return err
	}
	if b.Empty() {
		_, err := t.Conn.Exec(ctx, `DELETE FROM session_budgets WHERE session_id = ? AND owner_id = ?`, sessionID, owner)
		return t.Wrap(err, "delete session budget")
	}
	text, err := json.Marshal(b)
	if err != nil {
		return err
	}
	_, err = t.Conn.Exec(ctx, `INSERT INTO session_budgets (session_id, owner_id, budget, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (session_id) DO UPDATE SET budget = excluded.budget, updated_at = excluded.updated_at`,
		sessionID, owner, string(text), Micros(at))
	return t.Wrap(err, "put session budget")
}

// UserBudget returns the user's budget, zero when none was set.
func (t *Tx) UserBudget(ctx context.Context, userID string) (carryon.UserBudget, error) {
	var b carryon.UserBudget
	var text string
	err := t.Conn.QueryRow(ctx, `SELECT budget FROM user_budgets WHERE user_id = ?`, userID).Scan(&text)
	if errors.Is(err, ErrNoRows) {
		return b, nil
	} else if err != nil {
		return b, t.Wrap(err, "get user budget")
	}
	return parseUserBudget(userID, text)
}

// parseUserBudget reads a user's stored budget.
func parseUserBudget(userID, text string) (carryon.UserBudget, error) {
	var b carryon.UserBudget
	if err := json.Unmarshal([]byte(text), &b); err != nil {
		return b, fmt.Errorf("user %s: stored budget: %w", userID, err)
	}
	return b, nil
}

// PutUserBudget replaces the user's budget. ENOTFOUND when the user does not exist.
func (t *Tx) PutUserBudget(ctx context.Context, userID string, b carryon.UserBudget, at time.Time) error {
	if err := t.Writable(); err != nil {
		return err
	}
	var one int
	err := t.Conn.QueryRow(ctx, `SELECT 1 FROM users WHERE id = ?`, userID).Scan(&one)
	if errors.Is(err, ErrNoRows) {
		return NotFound("user", userID)
	} else if err != nil {
		return t.Wrap(err, "get user")
	}
	text, err := json.Marshal(b)
	if err != nil {
		return err
	}
	_, err = t.Conn.Exec(ctx, `INSERT INTO user_budgets (user_id, budget, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (user_id) DO UPDATE SET budget = excluded.budget, updated_at = excluded.updated_at`,
		userID, string(text), Micros(at))
	return t.Wrap(err, "put user budget")
}
