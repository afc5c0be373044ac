package store

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
)

// Budgets stores budgets and spend. A session's budget and spend go with the session; a user's
// with the user. Spend is counters per model, added to in the transaction that stores a model
// call's answer, so that a step and what it cost commit together or not at all.
type Budgets interface {
	// RecordSpend adds one model call to the spend of its session (ENOTFOUND when the session is
	// not owner's) and of the owner's UTC day and month of at.
	RecordSpend(ctx context.Context, owner, sessionID string, c carryon.ModelCall, at time.Time) error
	// SessionSpend returns what the owner's session spent, per model, by model name. ENOTFOUND.
	SessionSpend(ctx context.Context, owner, sessionID string) ([]carryon.ModelSpend, error)
	// UserSpend returns what the user spent in a period (carryon.Day or carryon.Month), per
	// model, by model name.
	UserSpend(ctx context.Context, userID, period string) ([]carryon.ModelSpend, error)
	// SessionBudget returns the owner's session's budget, nil when it has none. ENOTFOUND.
	SessionBudget(ctx context.Context, owner, sessionID string) (*carryon.Budget, error)
	// PutSessionBudget replaces the session's budget; nil or an empty one removes it. ENOTFOUND.
	PutSessionBudget(ctx context.Context, owner, sessionID string, b *carryon.Budget, at time.Time) error
	// UserBudget returns the user's budget, zero when none was set.
	UserBudget(ctx context.Context, userID string) (carryon.UserBudget, error)
	// PutUserBudget replaces the user's budget. ENOTFOUND when the user does not exist.
	PutUserBudget(ctx context.Context, userID string, b carryon.UserBudget, at time.Time) error

	// Holds: a model call in progress against its user's budgets (docs/API.md, "Budgets"), one
	// a run at most, taken before the call and released in the transaction that records what it
	// spent. A hold counts while its run is running under a live lease.

	// LockUserBudget reads the user's budget and peak (the largest call a run of the user made
	// under a hold), and on PostgreSQL locks the budget row to the end of the transaction, so
	// that the checks of one user's calls, on any instance, take turns. Zero for no budget.
	LockUserBudget(ctx context.Context, userID string) (carryon.UserBudget, carryon.Spend, error)
	// BudgetHolds returns the sum and the number of the owner's holds that count at now, but
	// for exceptRun's.
	BudgetHolds(ctx context.Context, owner, exceptRun string, now time.Time) (carryon.Spend, int, error)
	// PutBudgetHold takes or replaces run's hold, standing for s, and deletes the owner's holds
	// that no longer count at now.
	PutBudgetHold(ctx context.Context, owner, runID string, s carryon.Spend, now time.Time) error
	// ReleaseBudgetHold deletes run's hold, in the transaction that records what its call spent
	// (c, nil for nothing), and raises the user's peak to c.
	ReleaseBudgetHold(ctx context.Context, owner, runID string, c *carryon.ModelCall) error
}
