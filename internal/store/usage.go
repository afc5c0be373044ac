package store

import (
	"context"

	"github.com/carryon-hub/carryon"
)

// Usage reads spend per UTC day (GET /v1/me/usage, GET /v1/sessions/{id}/usage). The counters are
// the ones Budgets.RecordSpend adds to: a user's day rows of user_spend, a session's
// session_spend_days.
type Usage interface {
	// UserDays returns the user's spend of each UTC day from from to to (2006-01-02, inclusive)
	// that has any, oldest first.
	UserDays(ctx context.Context, userID, from, to string) ([]carryon.DaySpend, error)
	// SessionDays returns the owner's session's spend of each UTC day from from to to that has
	// any, oldest first. ENOTFOUND when the session is not the owner's.
	SessionDays(ctx context.Context, owner, sessionID, from, to string) ([]carryon.DaySpend, error)
}
