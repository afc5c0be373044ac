package store

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
)

// Forgetting erases a user and everything of theirs (the right to be forgotten) in bounded
// steps, each its own transaction, so that a large user does not hold the database and a crash
// loses no progress. The hub service drives it: MarkForgetting, then ForgetSessionRows of each of
// ForgetSessions until it deletes nothing and DeleteSession, then ForgetUserRows until it deletes
// nothing, then DeleteForgottenUser; AddForgotten in the same transaction as each step.
type Forgetting interface {
	// MarkForgetting begins forgetting the user userID at t: the user is renamed
	// "forgetting:"+userID (its name is gone at once), GetUser, ListUsers and KeyByHash no longer
	// see it, and its keys are deleted (their count is returned and recorded). ENOTFOUND when
	// there is no such user or it is being forgotten already.
	MarkForgetting(ctx context.Context, userID string, t time.Time) (int64, error)
	// Forgetting returns the receipt so far of a user being forgotten. ENOTFOUND when the user
	// does not exist or is not being forgotten.
	Forgetting(ctx context.Context, userID string) (*carryon.ForgetReceipt, error)
	// ForgettingUsers returns the ids of every user being forgotten, oldest mark first.
	ForgettingUsers(ctx context.Context) ([]string, error)
	// AddForgotten adds counts to the receipt of a user being forgotten. ENOTFOUND.
	AddForgotten(ctx context.Context, userID string, counts carryon.ForgetCounts) error
	// ForgetSessions returns up to limit of the owner's session ids, newest first, so that forks
	// come before the sessions they were made from.
	ForgetSessions(ctx context.Context, owner string, limit int) ([]string, error)
	// ForgetSessionRows deletes up to limit rows in the owner's session (its runs' events and
	// actions, its messages, tombstones and working memory revisions, its request ids, then its
	// runs) and returns how many of each it deleted; all zero when none is left, and the session
	// row itself is for DeleteSession. The session must have no forks left.
	ForgetSessionRows(ctx context.Context, owner, sessionID string, limit int) (carryon.ForgetCounts, error)
	// ForgetUserRows deletes up to limit of the owner's rows outside sessions (long-term memory
	// items with their search documents, request ids) and returns how many of each.
	ForgetUserRows(ctx context.Context, owner string, limit int) (carryon.ForgetCounts, error)
	// DeleteForgottenUser deletes the row of a user being forgotten and returns its final
	// receipt (FinishedAt is the caller's). ENOTFOUND when it is not being forgotten.
	DeleteForgottenUser(ctx context.Context, userID string) (*carryon.ForgetReceipt, error)
}
