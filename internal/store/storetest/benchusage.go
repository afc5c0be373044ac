package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// BenchUsageDays measures the reads of spend per day over a year: a user with days of spend
// on three models each (user_spend's day and month rows), and a session with as many days
// (session_spend_days), read as the usage routes read them at their largest window (366 days):
// op "user" reads the user's days, "session" the session's, "record" adds one model call (the
// four upserts of a step's spend).
func BenchUsageDays(b *testing.B, st store.Store, days int, op string) {
	ctx := b.Context()
	user := "usr_benchusage"
	if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertUser(ctx, &carryon.User{ID: user, Name: user, CreatedAt: time.Now().UTC()})
	}); err != nil {
		b.Fatal(err)
	}
	s := newSession(user, carryon.NewID("sess_"), time.Now().UTC().Truncate(time.Microsecond))
	s.ExpiresAt = s.ExpiresAt.Add(24 * time.Hour)
	insertSession(b, st, s)
	last := time.Date(2026, 12, 31, 12, 0, 0, 0, time.UTC)
	if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		for d := range days {
			for _, m := range []string{"m1", "m2", "m3"} {
				c := carryon.ModelCall{Model: m, InputTokens: 1000, OutputTokens: 100, CachedTokens: 10, Cost: 12345}
				if err := tx.RecordSpend(ctx, user, s.ID, c, last.AddDate(0, 0, -d)); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	from, to := carryon.Day(last.AddDate(0, 0, 1-carryon.MaxUsageDays)), carryon.Day(last)
	b.ResetTimer()
	for b.Loop() {
		var err error
		switch op {
		case "user":
			err = st.Read(ctx, func(tx store.Tx) error {
				got, err := tx.UserDays(ctx, user, from, to)
				if err == nil && len(got) != min(days, carryon.MaxUsageDays) {
					b.Fatalf("%d days, want %d", len(got), days)
				}
				return err
			})
		case "session":
			err = st.Read(ctx, func(tx store.Tx) error {
				_, err := tx.SessionDays(ctx, user, s.ID, from, to)
				return err
			})
		case "record":
			err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				return tx.RecordSpend(ctx, user, s.ID, carryon.ModelCall{Model: "m1", InputTokens: 1, OutputTokens: 1}, last)
			})
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
