package users

import (
	"context"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/idempotency"
	"github.com/carryon-hub/carryon/internal/store"
)

var _ carryon.BudgetService = (*Service)(nil)

// Usage returns the caller's spend today and this month (UTC), per model, and its budgets.
func (s *Service) Usage(ctx context.Context) (*carryon.UserUsage, error) {
	id := carryon.UserIDFromContext(ctx)
	if id == "" {
		return nil, carryon.Errorf(carryon.EUNAUTHORIZED, "no authenticated user")
	}
	now := s.clock()
	out := &carryon.UserUsage{UserID: id}
	err := s.st.Read(ctx, func(tx store.Tx) error {
		day, err := tx.UserSpend(ctx, id, carryon.Day(now))
		if err != nil {
			return err
		}
		month, err := tx.UserSpend(ctx, id, carryon.Month(now))
		if err != nil {
			return err
		}
		out.Today, out.Month = carryon.NewUsagePeriod(carryon.Day(now), day), carryon.NewUsagePeriod(carryon.Month(now), month)
		out.Budget, err = tx.UserBudget(ctx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UserBudget returns the budget of a user given by id or name.
func (s *Service) UserBudget(ctx context.Context, user string) (*carryon.UserBudget, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	var b carryon.UserBudget
	err := s.st.Read(ctx, func(tx store.Tx) error {
		u, err := tx.GetUser(ctx, user)
		if err != nil {
			return err
		}
		b, err = tx.UserBudget(ctx, u.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// SetUserBudget replaces the budget of a user given by id or name, under the admin's request id.
// Runs of the user already stopped at the budget stay stopped until someone approves them.
func (s *Service) SetUserBudget(ctx context.Context, user string, in carryon.UserBudgetInput) (*carryon.UserBudget, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	if err := in.UserBudget.Check(); err != nil {
		return nil, err
	}
	b := carryon.UserBudget{Day: normal(in.Day), Month: normal(in.Month)}
	now := s.clock()
	req := idempotency.Request{Owner: carryon.UserIDFromContext(ctx), ID: in.RequestID, Op: "user.budget", Target: user,
		Input: in.UserBudget, Now: now, TTL: s.keepID}
	return idempotency.Write(ctx, s.st, req, func(tx store.Tx) (*carryon.UserBudget, error) {
		u, err := tx.GetUser(ctx, user)
		if err != nil {
			return nil, err
		}
		if err := tx.PutUserBudget(ctx, u.ID, b, now); err != nil {
			return nil, err
		}
		return &b, nil
	})
}

// normal is a budget as stored: nil when it limits nothing, else with its action spelled out.
func normal(b *carryon.Budget) *carryon.Budget {
	if b.Empty() {
		return nil
	}
	n := *b
	n.OnExceed = b.Action()
	return &n
}
