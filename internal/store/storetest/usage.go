package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// testUsage checks spend per UTC day: the user's (user_spend's day rows, not its month rows) and
// the session's (session_spend_days), the window's bounds, owners, forks and deletes.
func testUsage(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	ctx := t.Context()
	write(t, st, func(tx store.Tx) error {
		for _, id := range []string{ownerA, ownerB} {
			if err := tx.InsertUser(ctx, &carryon.User{ID: id, Name: "name " + id, CreatedAt: at(0)}); err != nil {
				return err
			}
		}
		return nil
	})
	parent := newSession(ownerA, "ses_days", at(0))
	insertSession(t, st, parent)
	insertSession(t, st, newSession(ownerA, "ses_days2", at(0)))
	d1 := time.Date(2025, 3, 30, 12, 0, 0, 0, time.UTC)
	d2 := time.Date(2025, 3, 31, 23, 59, 59, 0, time.UTC)
	d3 := d2.Add(time.Second) // the next day and the next month
	call := func(model string, in, out, cached int64, cost carryon.NanoUSD) carryon.ModelCall {
		return carryon.ModelCall{Model: model, InputTokens: in, OutputTokens: out, CachedTokens: cached, Cost: cost}
	}
	write(t, st, func(tx store.Tx) error {
		for _, r := range []struct {
			sid string
			c   carryon.ModelCall
			at  time.Time
		}{
			{"ses_days", call("m1", 100, 10, 40, 1500), d1},
			{"ses_days", call("m2", 1, 2, 0, 3), d1},
			{"ses_days2", call("m1", 5, 5, 0, 0), d1},
			{"ses_days", call("m1", 7, 0, 0, 9), d3},
		} {
			if err := tx.RecordSpend(ctx, ownerA, r.sid, r.c, r.at); err != nil {
				return err
			}
		}
		return nil
	})
	day := func(date string, calls, in, out, cached int64, cost carryon.NanoUSD) carryon.DaySpend {
		return carryon.DaySpend{Date: date, Calls: calls, Tokens: in + out, InputTokens: in, OutputTokens: out, CachedTokens: cached, Cost: cost, USD: cost.USD()}
	}
	check := func(name string, got, want []carryon.DaySpend) {
		t.Helper()
		if len(got) == 0 && len(want) == 0 {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %+v, want %+v", name, got, want)
		}
	}
	var user, userNarrow, userB, sess, sess2 []carryon.DaySpend
	read(t, st, func(tx store.Tx) (err error) {
		if user, err = tx.UserDays(ctx, ownerA, "2025-03-01", "2025-04-30"); err != nil {
			return err
		}
		if userNarrow, err = tx.UserDays(ctx, ownerA, "2025-03-31", "2025-04-01"); err != nil {
			return err
		}
		if userB, err = tx.UserDays(ctx, ownerB, "2025-03-01", "2025-04-30"); err != nil {
			return err
		}
		if sess, err = tx.SessionDays(ctx, ownerA, "ses_days", "2025-03-01", "2025-04-30"); err != nil {
			return err
		}
		sess2, err = tx.SessionDays(ctx, ownerA, "ses_days2", "2025-03-31", "2025-04-30")
		return err
	})
	check("user A's days", user, []carryon.DaySpend{day("2025-03-30", 3, 106, 17, 40, 1503), day("2025-04-01", 1, 7, 0, 0, 9)})
	check("user A's days from 03-31", userNarrow, []carryon.DaySpend{day("2025-04-01", 1, 7, 0, 0, 9)})
	check("user B's days", userB, nil)
	check("the session's days", sess, []carryon.DaySpend{day("2025-03-30", 2, 101, 12, 40, 1503), day("2025-04-01", 1, 7, 0, 0, 9)})
	check("the other session's days from 03-31", sess2, nil)

	// Another owner's session is not found.
	err := st.Read(ctx, func(tx store.Tx) error {
		_, err := tx.SessionDays(ctx, ownerB, "ses_days", "2025-03-01", "2025-04-30")
		return err
	})
	wantCode(t, err, carryon.ENOTFOUND)

	// A fork starts with no spend of its own and adds none to its parent's.
	f := fork(t, st, parent, "ses_days_fork", 0, 1)
	write(t, st, func(tx store.Tx) error { return tx.RecordSpend(ctx, ownerA, f.ID, call("m1", 50, 50, 0, 100), d3) })
	var forkDays, parentDays []carryon.DaySpend
	read(t, st, func(tx store.Tx) (err error) {
		if forkDays, err = tx.SessionDays(ctx, ownerA, f.ID, "2025-03-01", "2025-04-30"); err != nil {
			return err
		}
		parentDays, err = tx.SessionDays(ctx, ownerA, "ses_days", "2025-03-01", "2025-04-30")
		return err
	})
	check("the fork's days", forkDays, []carryon.DaySpend{day("2025-04-01", 1, 50, 50, 0, 100)})
	check("the parent's days after the fork's call", parentDays, sess)

	// Deleting a session deletes its days; the user's stay.
	write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, f.ID) })
	write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, "ses_days") })
	err = st.Read(ctx, func(tx store.Tx) error {
		_, err := tx.SessionDays(ctx, ownerA, "ses_days", "2025-03-01", "2025-04-30")
		return err
	})
	wantCode(t, err, carryon.ENOTFOUND)
	read(t, st, func(tx store.Tx) (err error) {
		user, err = tx.UserDays(ctx, ownerA, "2025-03-01", "2025-04-30")
		return err
	})
	check("user A's days after the deletes", user, []carryon.DaySpend{day("2025-03-30", 3, 106, 17, 40, 1503), day("2025-04-01", 2, 57, 50, 0, 109)})
	// No row of the deleted sessions is left behind (a new session of the same id starts at none).
	insertSession(t, st, newSession(ownerA, "ses_days", at(5)))
	read(t, st, func(tx store.Tx) (err error) {
		sess, err = tx.SessionDays(ctx, ownerA, "ses_days", "2025-03-01", "2025-04-30")
		return err
	})
	check("a new session of a deleted one's id", sess, nil)
}
