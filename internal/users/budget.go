package users

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/idempotency"
	"github.com/carryon-hub/carryon/internal/store"
)

var _ carryon.BudgetService = (*Service)(nil)

// Usage returns the caller's spend today and this month (UTC), per model, per day of the days o
// asks for, and its budgets.
func (s *Service) Usage(ctx context.Context, o carryon.UsageOptions) (*carryon.UserUsage, error) {
	id := carryon.UserIDFromContext(ctx)
	if id == "" {
		return nil, carryon.Errorf(carryon.EUNAUTHORIZED, "no authenticated user")
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	var out *carryon.UserUsage
	err := s.st.Read(ctx, func(tx store.Tx) (err error) {
		out, err = usage(ctx, tx, id, o, s.clock())
		return err
	})
	return out, err
}

// UserUsage returns the usage of a user given by id or name: what Usage answers that user.
func (s *Service) UserUsage(ctx context.Context, user string, o carryon.UsageOptions) (*carryon.UserUsage, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	var out *carryon.UserUsage
	err := s.st.Read(ctx, func(tx store.Tx) error {
		u, err := tx.GetUser(ctx, user)
		if err != nil {
			return err
		}
		out, err = usage(ctx, tx, u.ID, o, s.clock())
		return err
	})
	return out, err
}

// usage reads a user's usage in tx: today's and this month's spend per model, every day of o's
// window, and the budgets.
func usage(ctx context.Context, tx store.Tx, id string, o carryon.UsageOptions, now time.Time) (*carryon.UserUsage, error) {
	out := &carryon.UserUsage{UserID: id}
	day, err := tx.UserSpend(ctx, id, carryon.Day(now))
	if err != nil {
		return nil, err
	}
	month, err := tx.UserSpend(ctx, id, carryon.Month(now))
	if err != nil {
		return nil, err
	}
	out.Today, out.Month = carryon.NewUsagePeriod(carryon.Day(now), day), carryon.NewUsagePeriod(carryon.Month(now), month)
	from, to := o.Window(now)
	days, err := tx.UserDays(ctx, id, from, to)
	if err != nil {
		return nil, err
	}
	out.Days = carryon.EveryDay(from, to, days)
	if out.Budget, err = tx.UserBudget(ctx, id); err != nil {
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
