package sessions

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

var _ carryon.UsageService = (*Service)(nil)

// SessionUsage returns what the caller's session spent, in all and per model (session_spend), per
// UTC day of the days o asks for (every day, zeros included), and its budget, from one read
// transaction. ENOTFOUND for a session that is not the caller's.
func (s *Service) SessionUsage(ctx context.Context, id string, o carryon.UsageOptions) (*carryon.SessionUsage, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	out := &carryon.SessionUsage{SessionID: id}
	err := s.read(ctx, func(tx store.Tx, own string, now time.Time) error {
		models, err := tx.SessionSpend(ctx, own, id)
		if err != nil {
			return err
		}
		out.Models = models
		if out.Models == nil {
			out.Models = []carryon.ModelSpend{}
		}
		for _, m := range models {
			out.Spend = out.Spend.Add(m.Spend())
		}
		from, to := o.Window(now)
		days, err := tx.SessionDays(ctx, own, id, from, to)
		if err != nil {
			return err
		}
		out.Days = carryon.EveryDay(from, to, days)
		out.Budget, err = tx.SessionBudget(ctx, own, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
