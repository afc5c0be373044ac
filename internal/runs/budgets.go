package runs

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// CheckBudget reads, before a model call, the budgets the run spends against (its session's, its
// user's for today and for this month, UTC) and what they have spent, and returns the first one
// spent as a *carryon.BudgetStop.
//
// It reads committed spend and takes no lock: runs that check at once may each make one more
// model call, so a budget is exceeded by at most one step's model calls per run spending against
// it at that moment, on any number of instances (docs/API.md, "Budgets").
func (h *hub) CheckBudget(ctx context.Context, run *carryon.Run) error {
	var stop *carryon.BudgetStop
	now := h.s.now()
	err := h.s.st.Read(ctx, func(tx store.Tx) error {
		var err error
		stop, err = budgetStop(ctx, tx, run.OwnerID, run.SessionID, now)
		return err
	})
	if err != nil {
		return err
	}
	if stop != nil {
		return stop
	}
	return nil
}

// budgetStop returns the first spent budget of the session and its owner at now, nil when none is.
func budgetStop(ctx context.Context, tx store.Tx, owner, sessionID string, now time.Time) (*carryon.BudgetStop, error) {
	sb, err := tx.SessionBudget(ctx, owner, sessionID)
	if err != nil {
		return nil, err
	}
	if !sb.Empty() {
		ms, err := tx.SessionSpend(ctx, owner, sessionID)
		if err != nil {
			return nil, err
		}
		if s := sumSpend(ms); sb.SpentBy(s) {
			return &carryon.BudgetStop{Reason: carryon.ReasonBudgetExceeded, Scope: carryon.BudgetScopeSession, Spent: s, Limit: *sb, OnExceed: sb.Action()}, nil
		}
	}
	ub, err := tx.UserBudget(ctx, owner)
	if err != nil {
		return nil, err
	}
	for _, p := range []struct {
		scope, period string
		b             *carryon.Budget
	}{{carryon.BudgetScopeUserDay, carryon.Day(now), ub.Day}, {carryon.BudgetScopeUserMonth, carryon.Month(now), ub.Month}} {
		if p.b.Empty() {
			continue
		}
		ms, err := tx.UserSpend(ctx, owner, p.period)
		if err != nil {
			return nil, err
		}
		if s := sumSpend(ms); p.b.SpentBy(s) {
			return &carryon.BudgetStop{Reason: carryon.ReasonBudgetExceeded, Scope: p.scope, Period: p.period, Spent: s, Limit: *p.b, OnExceed: p.b.Action()}, nil
		}
	}
	return nil, nil
}

// sumSpend adds up the spend of models.
func sumSpend(models []carryon.ModelSpend) carryon.Spend {
	var s carryon.Spend
	for _, m := range models {
		s = s.Add(m.Spend())
	}
	return s
}

// modelCall is the spend of a step's model calls u (cached of their input tokens from the
// provider's prompt cache) on the run's model, priced with the agents
// file's prices (nothing in money for a model without a price); ok is false when it used nothing.
func (s *Service) modelCall(run *carryon.Run, u carryon.Usage, cached int) (carryon.ModelCall, bool) {
	if u.InputTokens <= 0 && u.OutputTokens <= 0 {
		return carryon.ModelCall{}, false
	}
	c := carryon.ModelCall{Model: run.Model, InputTokens: int64(max(u.InputTokens, 0)), OutputTokens: int64(max(u.OutputTokens, 0))}
	c.CachedTokens = min(int64(max(cached, 0)), c.InputTokens)
	if s.cfg.Prices != nil {
		if p, ok := s.cfg.Prices(run.Model); ok {
			c.Cost = p.Cost(c.InputTokens, c.OutputTokens, c.CachedTokens)
		}
	}
	return c, true
}

// recordSpend records the step's model calls in tx, the transaction that stores their answer.
func (h *hub) recordSpend(ctx context.Context, tx store.Tx, run *carryon.Run, u carryon.Usage, cached int, now time.Time) (*carryon.ModelCall, error) {
	c, ok := h.s.modelCall(run, u, cached)
	if !ok {
		return nil, nil
	}
	if err := tx.RecordSpend(ctx, run.OwnerID, run.SessionID, c, now); err != nil {
		return nil, err
	}
	return &c, nil
}
