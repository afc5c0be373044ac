package storetest

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

func testBudgets(t *testing.T, open func(t *testing.T) store.Store) {
	setup := func(t *testing.T) store.Store {
		st := open(t)
		write(t, st, func(tx store.Tx) error {
			for _, id := range []string{ownerA, ownerB} {
				if err := tx.InsertUser(t.Context(), &carryon.User{ID: id, Name: "name " + id, CreatedAt: at(0)}); err != nil {
					return err
				}
			}
			return nil
		})
		insertSession(t, st, newSession(ownerA, "ses_spend", at(0)))
		insertSession(t, st, newSession(ownerA, "ses_other", at(0)))
		return st
	}
	t.Run("SpendCounters", func(t *testing.T) {
		st := setup(t)
		ctx := t.Context()
		day1 := time.Date(2025, 3, 31, 23, 59, 59, 0, time.UTC)
		day2 := day1.Add(2 * time.Second) // the next day and the next month
		write(t, st, func(tx store.Tx) error {
			if err := tx.RecordSpend(ctx, ownerA, "ses_spend", carryon.ModelCall{Model: "m1", InputTokens: 100, OutputTokens: 10, CachedTokens: 40, Cost: 1500}, day1); err != nil {
				return err
			}
			if err := tx.RecordSpend(ctx, ownerA, "ses_spend", carryon.ModelCall{Model: "m1", InputTokens: 1, OutputTokens: 2, Cost: 3}, day1); err != nil {
				return err
			}
			if err := tx.RecordSpend(ctx, ownerA, "ses_other", carryon.ModelCall{Model: "m0", InputTokens: 5, OutputTokens: 5}, day1); err != nil {
				return err
			}
			return tx.RecordSpend(ctx, ownerA, "ses_spend", carryon.ModelCall{Model: "m2", InputTokens: 7, OutputTokens: 0, Cost: 9}, day2)
		})
		var sess, d1, d2, m1, m2 []carryon.ModelSpend
		read(t, st, func(tx store.Tx) (err error) {
			if sess, err = tx.SessionSpend(ctx, ownerA, "ses_spend"); err != nil {
				return err
			}
			if d1, err = tx.UserSpend(ctx, ownerA, carryon.Day(day1)); err != nil {
				return err
			}
			if d2, err = tx.UserSpend(ctx, ownerA, carryon.Day(day2)); err != nil {
				return err
			}
			if m1, err = tx.UserSpend(ctx, ownerA, carryon.Month(day1)); err != nil {
				return err
			}
			m2, err = tx.UserSpend(ctx, ownerA, carryon.Month(day2))
			return err
		})
		ms := func(model string, calls, in, out, cached int64, cost carryon.NanoUSD) carryon.ModelSpend {
			return carryon.ModelSpend{Model: model, Calls: calls, InputTokens: in, OutputTokens: out, CachedTokens: cached, Cost: cost, USD: cost.USD()}
		}
		for _, c := range []struct {
			name      string
			got, want []carryon.ModelSpend
		}{
			{"session", sess, []carryon.ModelSpend{ms("m1", 2, 101, 12, 40, 1503), ms("m2", 1, 7, 0, 0, 9)}},
			{"day 1", d1, []carryon.ModelSpend{ms("m0", 1, 5, 5, 0, 0), ms("m1", 2, 101, 12, 40, 1503)}},
			{"day 2", d2, []carryon.ModelSpend{ms("m2", 1, 7, 0, 0, 9)}},
			{"month 1", m1, []carryon.ModelSpend{ms("m0", 1, 5, 5, 0, 0), ms("m1", 2, 101, 12, 40, 1503)}},
			{"month 2", m2, []carryon.ModelSpend{ms("m2", 1, 7, 0, 0, 9)}},
		} {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("%s spend = %+v, want %+v", c.name, c.got, c.want)
			}
		}
		// Another owner sees none of it and cannot record on the session.
		err := st.Read(ctx, func(tx store.Tx) error { _, err := tx.SessionSpend(ctx, ownerB, "ses_spend"); return err })
		wantCode(t, err, carryon.ENOTFOUND)
		err = st.Write(ctx, func(_ context.Context, tx store.Tx) error {
			return tx.RecordSpend(ctx, ownerB, "ses_spend", carryon.ModelCall{Model: "m1", InputTokens: 1}, day1)
		})
		wantCode(t, err, carryon.ENOTFOUND)
		read(t, st, func(tx store.Tx) error {
			b, err := tx.UserSpend(ctx, ownerB, carryon.Day(day1))
			if err == nil && len(b) != 0 {
				t.Errorf("owner B's spend = %+v, want none", b)
			}
			return err
		})
		// A rolled-back write records nothing.
		_ = st.Write(ctx, func(_ context.Context, tx store.Tx) error {
			if err := tx.RecordSpend(ctx, ownerA, "ses_spend", carryon.ModelCall{Model: "m1", InputTokens: 1000}, day1); err != nil {
				return err
			}
			return carryon.Errorf(carryon.ECONFLICT, "roll back")
		})
		read(t, st, func(tx store.Tx) error {
			got, err := tx.SessionSpend(ctx, ownerA, "ses_spend")
			if err == nil && got[0].InputTokens != 101 {
				t.Errorf("after a rollback the session's m1 input tokens = %d, want 101", got[0].InputTokens)
			}
			return err
		})
		// Deleting the session deletes its counters; the user's stay.
		write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, "ses_spend") })
		read(t, st, func(tx store.Tx) error {
			got, err := tx.UserSpend(ctx, ownerA, carryon.Day(day1))
			if err == nil && len(got) != 2 {
				t.Errorf("after the session's delete the day's spend = %+v, want 2 models", got)
			}
			return err
		})
	})
	t.Run("ConcurrentSpend", func(t *testing.T) {
		st := setup(t)
		ctx := t.Context()
		var wg sync.WaitGroup
		const n = 20
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sid := "ses_spend"
				if i%2 == 1 {
					sid = "ses_other"
				}
				errs <- st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
					return tx.RecordSpend(ctx, ownerA, sid, carryon.ModelCall{Model: "m", InputTokens: 1, OutputTokens: 1, Cost: 1}, at(0))
				})
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		read(t, st, func(tx store.Tx) error {
			got, err := tx.UserSpend(ctx, ownerA, carryon.Day(at(0)))
			if err == nil && (len(got) != 1 || got[0].Calls != n || got[0].Cost != n || got[0].InputTokens != n) {
				t.Errorf("after %d concurrent calls the day's spend = %+v", n, got)
			}
			return err
		})
	})
	t.Run("BudgetRoundTrip", func(t *testing.T) {
		st := setup(t)
		ctx := t.Context()
		tokens, usd := int64(5000), 1.25
		sb := &carryon.Budget{Tokens: &tokens, USD: &usd, OnExceed: carryon.BudgetFail}
		var got *carryon.Budget
		read(t, st, func(tx store.Tx) (err error) { got, err = tx.SessionBudget(ctx, ownerA, "ses_spend"); return err })
		if got != nil {
			t.Fatalf("a new session's budget = %+v, want none", got)
		}
		write(t, st, func(tx store.Tx) error { return tx.PutSessionBudget(ctx, ownerA, "ses_spend", sb, at(1)) })
		read(t, st, func(tx store.Tx) (err error) { got, err = tx.SessionBudget(ctx, ownerA, "ses_spend"); return err })
		if !reflect.DeepEqual(got, sb) {
			t.Fatalf("session budget = %+v, want %+v", got, sb)
		}
		err := st.Read(ctx, func(tx store.Tx) error { _, err := tx.SessionBudget(ctx, ownerB, "ses_spend"); return err })
		wantCode(t, err, carryon.ENOTFOUND)
		err = st.Write(ctx, func(_ context.Context, tx store.Tx) error {
			return tx.PutSessionBudget(ctx, ownerB, "ses_spend", sb, at(2))
		})
		wantCode(t, err, carryon.ENOTFOUND)
		write(t, st, func(tx store.Tx) error {
			return tx.PutSessionBudget(ctx, ownerA, "ses_spend", &carryon.Budget{}, at(3))
		})
		read(t, st, func(tx store.Tx) (err error) { got, err = tx.SessionBudget(ctx, ownerA, "ses_spend"); return err })
		if got != nil {
			t.Fatalf("after an empty budget the session's budget = %+v, want none", got)
		}

		ub := carryon.UserBudget{Day: &carryon.Budget{Tokens: &tokens}, Month: &carryon.Budget{USD: &usd, OnExceed: carryon.BudgetPause}}
		var u carryon.UserBudget
		read(t, st, func(tx store.Tx) (err error) { u, err = tx.UserBudget(ctx, ownerA); return err })
		if u.Day != nil || u.Month != nil {
			t.Fatalf("a new user's budget = %+v, want none", u)
		}
		write(t, st, func(tx store.Tx) error { return tx.PutUserBudget(ctx, ownerA, ub, at(1)) })
		read(t, st, func(tx store.Tx) (err error) { u, err = tx.UserBudget(ctx, ownerA); return err })
		if !reflect.DeepEqual(u, ub) {
			t.Fatalf("user budget = %+v, want %+v", u, ub)
		}
		read(t, st, func(tx store.Tx) (err error) { u, err = tx.UserBudget(ctx, ownerB); return err })
		if u.Day != nil || u.Month != nil {
			t.Fatalf("owner B's budget = %+v, want none", u)
		}
		err = st.Write(ctx, func(_ context.Context, tx store.Tx) error { return tx.PutUserBudget(ctx, "usr_missing", ub, at(2)) })
		wantCode(t, err, carryon.ENOTFOUND)
	})
	t.Run("Holds", func(t *testing.T) { testBudgetHolds(t, setup(t)) })
}

// testBudgetHolds checks budget holds: only a running run's hold under a live lease counts, the
// run's own is left out, a put replaces, a put deletes the owner's holds that no longer count, a
// release raises the peak, and the budget row's lock reads the peak.
func testBudgetHolds(t *testing.T, st store.Store) {
	ctx := t.Context()
	sess := newSession(ownerA, "ses_spend", at(0))
	live := func(id string, status carryon.RunStatus, lease *time.Time) {
		r := newRun(sess, id, status, 1)
		r.Attempt, r.LeaseOwner, r.LeaseExpiresAt = 1, "runner", lease
		insertRun(t, st, r)
	}
	live("run_a", carryon.RunRunning, tp(at(100)))
	live("run_b", carryon.RunRunning, tp(at(100)))
	live("run_late", carryon.RunRunning, tp(at(10))) // its lease runs out at 10
	live("run_done", carryon.RunSucceeded, nil)
	holds := func(except string, now time.Time) (s carryon.Spend, n int) {
		read(t, st, func(tx store.Tx) (err error) { s, n, err = tx.BudgetHolds(ctx, ownerA, except, now); return err })
		return s, n
	}
	var peak carryon.Spend
	write(t, st, func(tx store.Tx) (err error) { _, peak, err = tx.LockUserBudget(ctx, ownerA); return err })
	if peak != (carryon.Spend{}) {
		t.Fatalf("peak with no budget row = %+v", peak)
	}
	tokens := int64(1000)
	write(t, st, func(tx store.Tx) error {
		return tx.PutUserBudget(ctx, ownerA, carryon.UserBudget{Day: &carryon.Budget{Tokens: &tokens}}, at(1))
	})
	put := func(run string, tokens int64, cost carryon.NanoUSD, now time.Time) {
		write(t, st, func(tx store.Tx) error {
			return tx.PutBudgetHold(ctx, ownerA, run, carryon.Spend{Tokens: tokens, Cost: cost}, now)
		})
	}
	put("run_a", 10, 100, at(5))
	put("run_a", 20, 200, at(5)) // replaces
	put("run_late", 40, 400, at(5))
	put("run_done", 80, 800, at(5)) // a hold that never counts: its run is not running
	if s, n := holds("run_b", at(5)); n != 2 || s.Tokens != 60 || s.Cost != 600 {
		t.Fatalf("holds at 5 = %d, %+v; want run_a's and run_late's (2, 60 tokens, 600)", n, s)
	}
	if s, n := holds("run_a", at(10)); n != 1 || s.Tokens != 40 {
		t.Fatalf("holds but run_a's at 10 = %d, %+v; want run_late's (its lease ends at 10)", n, s)
	}
	if s, n := holds("run_b", at(11)); n != 1 || s.Tokens != 20 {
		t.Fatalf("holds at 11 = %d, %+v; want only run_a's (run_late's lease ran out)", n, s)
	}
	var others carryon.Spend
	read(t, st, func(tx store.Tx) (err error) { others, _, err = tx.BudgetHolds(ctx, ownerB, "", at(5)); return err })
	if others.Tokens != 0 {
		t.Fatalf("owner B's holds = %+v, want none", others)
	}
	put("run_b", 5, 50, at(11)) // deletes run_late's and run_done's
	if s, n := holds("run_b", at(5)); n != 1 || s.Tokens != 20 {
		t.Fatalf("holds at 5 after a put at 11 = %d, %+v; want only run_a's (run_late's was deleted)", n, s)
	}
	write(t, st, func(tx store.Tx) error {
		return tx.ReleaseBudgetHold(ctx, ownerA, "run_a", &carryon.ModelCall{InputTokens: 30, OutputTokens: 5, Cost: 70})
	})
	write(t, st, func(tx store.Tx) error {
		return tx.ReleaseBudgetHold(ctx, ownerA, "run_b", &carryon.ModelCall{InputTokens: 10, OutputTokens: 1, Cost: 90})
	})
	if _, n := holds("", at(11)); n != 0 {
		t.Fatalf("%d holds after both released", n)
	}
	var ub carryon.UserBudget
	write(t, st, func(tx store.Tx) (err error) { ub, peak, err = tx.LockUserBudget(ctx, ownerA); return err })
	if peak.Tokens != 35 || peak.Cost != 90 || ub.Day == nil || *ub.Day.Tokens != tokens {
		t.Fatalf("budget %+v, peak %+v; want the day's 1000 tokens and a peak of 35 tokens and 90", ub, peak)
	}
}
