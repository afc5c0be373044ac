package httpapi

import (
	"context"
	"net/http"

	"github.com/carryon-hub/carryon"
)

func (s *server) handleUsage() http.HandlerFunc {
	if s.budgets == nil {
		return s.notImplemented("this server keeps no spend")
	}
	return readRoute(s, func(r *http.Request, _ *query) (*carryon.UserUsage, error) {
		return s.budgets.Usage(r.Context())
	})
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
