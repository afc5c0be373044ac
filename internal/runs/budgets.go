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
// A session runs one run at a time, so its budget is exceeded by at most one model call. A user's
// runs may call at once, on any number of instances: when the user has a budget, the check also
// takes a hold for the call in a write transaction that locks the user's budget row. A hold
// stands for twice the largest call the user's runs have made (the peak); calls run side by side
// while what was spent, what the others' holds stand for and this hold stay under every limit,
// and past that a call waits until it is the only one in progress. So a user's budget is
// exceeded by at most one call, and by less than the others' excess over the peak when calls grow
// more than twice at once (docs/API.md, "Budgets").
func (h *hub) CheckBudget(ctx context.Context, run *carryon.Run) error {
	wait := 10 * time.Millisecond
	for {
		stop, ok, err := h.checkBudget(ctx, run)
		if err != nil {
			return err
		}
		if stop != nil {
			return stop
		}
		if ok {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}

// checkBudget returns the first spent budget, or ok when the run may call its model now: the
// user has no budget, or the run took its hold; neither when it must wait for the user's other
// calls in progress.
func (h *hub) checkBudget(ctx context.Context, run *carryon.Run) (stop *carryon.BudgetStop, ok bool, err error) {
	now := h.s.now()
	var user bool
	err = h.s.st.Read(ctx, func(tx store.Tx) error {
		var err error
		stop, user, err = budgetStop(ctx, tx, run.OwnerID, run.SessionID, now)
		return err
	})
	if err != nil || stop != nil || !user {
		return stop, err == nil && stop == nil, err
	}
	err = h.s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		ub, peak, err := tx.LockUserBudget(ctx, run.OwnerID)
		if err != nil {
			return err
		}
		// The holds first, then the spend: a step that commits between the two reads is
		// counted twice (its hold and its spend), never not at all.
		held, others, err := tx.BudgetHolds(ctx, run.OwnerID, run.ID, now)
		if err != nil {
			return err
		}
		stop, err = userBudgetStop(ctx, tx, run.OwnerID, ub, now, carryon.Spend{})
		if err != nil || stop != nil {
			return err
		}
		mine := peak.Add(peak)
		if others > 0 && peak.Tokens == 0 {
			return nil // no call made yet to size a hold by: one at a time
		}
		if others > 0 {
			if near, err := userBudgetStop(ctx, tx, run.OwnerID, ub, now, held.Add(mine)); err != nil || near != nil {
				return err
			}
		}
		if err := tx.PutBudgetHold(ctx, run.OwnerID, run.ID, mine, now); err != nil {
			return err
		}
		ok = true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	if ok {
		h.mu.Lock()
		h.held = true
		h.mu.Unlock()
	}
	return stop, ok, nil
}

// release deletes the attempt's budget hold, if it holds one, in tx, the transaction that records
// what the call spent (c); released marks it gone once tx committed.
func (h *hub) release(ctx context.Context, tx store.Tx, run *carryon.Run, c *carryon.ModelCall) error {
	h.mu.Lock()
	held := h.held
	h.mu.Unlock()
	if !held {
		return nil
	}
	return tx.ReleaseBudgetHold(ctx, run.OwnerID, run.ID, c)
}

// released notes that the transaction that released the attempt's hold committed (err nil).
func (h *hub) released(err error) {
	if err == nil {
		h.mu.Lock()
		h.held = false
		h.mu.Unlock()
	}
}

// budgetStop returns the first spent budget of the session and its owner at now, nil when none
// is, and whether the owner has a budget of its own.
func budgetStop(ctx context.Context, tx store.Tx, owner, sessionID string, now time.Time) (*carryon.BudgetStop, bool, error) {
	sb, err := tx.SessionBudget(ctx, owner, sessionID)
	if err != nil {
		return nil, false, err
	}
	if !sb.Empty() {
		ms, err := tx.SessionSpend(ctx, owner, sessionID)
		if err != nil {
			return nil, false, err
		}
		if s := sumSpend(ms); sb.SpentBy(s) {
			return &carryon.BudgetStop{Reason: carryon.ReasonBudgetExceeded, Scope: carryon.BudgetScopeSession, Spent: s, Limit: *sb, OnExceed: sb.Action()}, false, nil
		}
	}
	ub, err := tx.UserBudget(ctx, owner)
	if err != nil {
		return nil, false, err
	}
	stop, err := userBudgetStop(ctx, tx, owner, ub, now, carryon.Spend{})
	return stop, !ub.Day.Empty() || !ub.Month.Empty(), err
}

// userBudgetStop returns the first of the owner's budgets ub that what was spent at now, plus
// more, reaches; nil when none does.
func userBudgetStop(ctx context.Context, tx store.Tx, owner string, ub carryon.UserBudget, now time.Time, more carryon.Spend) (*carryon.BudgetStop, error) {
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
		if s := sumSpend(ms); p.b.SpentBy(s.Add(more)) {
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
