package sessions

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// withBudget fills the session's budget, and with spend what its runs spent.
func withBudget(ctx context.Context, tx store.Tx, sess *carryon.Session, spend bool) error {
	b, err := tx.SessionBudget(ctx, sess.OwnerID, sess.ID)
	if err != nil {
		return err
	}
	sess.Budget = b
	if !spend {
		return nil
	}
	models, err := tx.SessionSpend(ctx, sess.OwnerID, sess.ID)
	if err != nil {
		return err
	}
	s := carryon.Spend{}
	for _, m := range models {
		s = s.Add(m.Spend())
	}
	sess.Spend = &s
	return nil
}

// sameBudget says whether a session's budget (nil for none) is the one an update gives (empty for
// none).
func sameBudget(cur, next *carryon.Budget) bool {
	if cur.Empty() || next.Empty() {
		return cur.Empty() && next.Empty()
	}
	a, _ := json.Marshal(cur)
	b, _ := json.Marshal(next)
	return bytes.Equal(a, b)
}

// normalBudget is b with its action spelled out (pause when unset), so that the same budget is
// stored and compared the same way however it was written.
func normalBudget(b *carryon.Budget) *carryon.Budget {
	if b == nil {
		return nil
	}
	n := *b
	n.OnExceed = b.Action()
	return &n
}
