package httpapi

import (
	"context"
	"net/http"

	"github.com/carryon-hub/carryon"
)

// handleUsage answers the caller's usage; handleUserUsage another user's (by the path's id).
func (s *server) handleUsage() http.HandlerFunc {
	return s.usageRoute(func(r *http.Request, o carryon.UsageOptions) (*carryon.UserUsage, error) {
		return s.budgets.Usage(r.Context(), o)
	})
}

func (s *server) handleUserUsage() http.HandlerFunc {
	return s.usageRoute(func(r *http.Request, o carryon.UsageOptions) (*carryon.UserUsage, error) {
		return s.budgets.UserUsage(r.Context(), r.PathValue("id"), o)
	})
}

// usageRoute is a user-usage read: the query's options, then get.
func (s *server) usageRoute(get func(*http.Request, carryon.UsageOptions) (*carryon.UserUsage, error)) http.HandlerFunc {
	if s.budgets == nil {
		return s.notImplemented("this server keeps no spend")
	}
	return readRoute(s, func(r *http.Request, q *query) (*carryon.UserUsage, error) {
		o, err := usageOptions(q)
		if err != nil {
			return nil, err
		}
		return get(r, o)
	})
}

func (s *server) handleSessionUsage() http.HandlerFunc {
	if s.sessionUsage == nil {
		return s.notImplemented("this server keeps no spend")
	}
	return readRoute(s, func(r *http.Request, q *query) (*carryon.SessionUsage, error) {
		o, err := usageOptions(q)
		if err != nil {
			return nil, err
		}
		return s.sessionUsage(r.Context(), r.PathValue("id"), o)
	})
}

// usageOptions reads a usage route's days (1 to carryon.MaxUsageDays, default
// carryon.DefaultUsageDays).
func usageOptions(q *query) (carryon.UsageOptions, error) {
	o := carryon.UsageOptions{Days: int(q.int("days", 1, carryon.MaxUsageDays, carryon.DefaultUsageDays))}
	return o, q.err
}

func (s *server) handleUserBudgetGet() http.HandlerFunc {
	if s.budgets == nil {
		return s.notImplemented("this server keeps no budgets")
	}
	return readRoute(s, func(r *http.Request, _ *query) (*carryon.UserBudget, error) {
		return s.budgets.UserBudget(r.Context(), r.PathValue("id"))
	})
}

func (s *server) handleUserBudgetPut() http.HandlerFunc {
	if s.budgets == nil {
		return s.notImplemented("this server keeps no budgets")
	}
	return writeRoute[carryon.UserBudgetInput, *carryon.UserBudget]{
		controls: retryWrite(func(in *carryon.UserBudgetInput) *carryon.RetryOptions { return &in.RetryOptions }),
		call: func(ctx context.Context, r *http.Request, in carryon.UserBudgetInput) (*carryon.UserBudget, error) {
			return s.budgets.SetUserBudget(ctx, r.PathValue("id"), in)
		},
		status: http.StatusOK,
	}.handler(s)
}
