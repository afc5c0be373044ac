package sqlq

import (
	"context"

	"github.com/carryon-hub/carryon"
)

func scanDaySpend(r Row) (carryon.DaySpend, error) {
	var d carryon.DaySpend
	err := r.Scan(&d.Date, &d.Calls, &d.InputTokens, &d.OutputTokens, &d.CachedTokens, &d.Cost)
	d.Tokens, d.USD = d.InputTokens+d.OutputTokens, d.Cost.USD()
	return d, err
}

// UserDays sums the user's day rows of user_spend (period of ten characters: a month's is seven)
// from from to to by day.
func (t *Tx) UserDays(ctx context.Context, userID, from, to string) ([]carryon.DaySpend, error) {
	return scanAll(t, ctx, "user spend per day", scanDaySpend, `SELECT period, CAST(SUM(calls) AS BIGINT), CAST(SUM(input_tokens) AS BIGINT),
		CAST(SUM(output_tokens) AS BIGINT), CAST(SUM(cached_tokens) AS BIGINT), CAST(SUM(cost) AS BIGINT) FROM user_spend
		WHERE user_id = ? AND period >= ? AND period <= ? AND LENGTH(period) = 10 GROUP BY period ORDER BY period`, userID, from, to)
}

// SessionDays returns the session's rows of session_spend_days from from to to. ENOTFOUND when
// the session is not the owner's.
func (t *Tx) SessionDays(ctx context.Context, owner, sessionID, from, to string) ([]carryon.DaySpend, error) {
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	return scanAll(t, ctx, "session spend per day", scanDaySpend, `SELECT day, calls, input_tokens, output_tokens, cached_tokens, cost
		FROM session_spend_days WHERE session_id = ? AND owner_id = ? AND day >= ? AND day <= ? ORDER BY day`, sessionID, owner, from, to)
}
