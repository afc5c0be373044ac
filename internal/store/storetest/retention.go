package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/carryon-hub/carryon/internal/store"
)

func testRetention(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("ExistingSessions", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		insertSession(t, st, newSession(ownerA, "sess_a", at(0)))
		insertSession(t, st, newSession(ownerB, "sess_b", at(0)))
		ids := []string{"sess_a", "sess_none"}
		for i := range 250 { // more than one query's worth
			ids = append(ids, fmt.Sprintf("sess_x%d", i))
		}
		ids = append(ids, "sess_b")
		read(t, st, func(tx store.Tx) error {
			got, err := tx.ExistingSessions(ctx, ids)
			if err != nil || len(got) != 2 || !got["sess_a"] || !got["sess_b"] {
				t.Fatalf("ExistingSessions = %v, %v; want sess_a and sess_b, whoever owns them", got, err)
			}
			return nil
		})
	})
	t.Run("SessionsOverLimit", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		// A has four sessions last active at 4, 1, 3, 2; B has one.
		for i, sec := range []int{4, 1, 3, 2} {
			insertSession(t, st, newSession(ownerA, "sess_a"+string(rune('0'+i)), at(sec)))
		}
		insertSession(t, st, newSession(ownerB, "sess_b0", at(0)))
		read(t, st, func(tx store.Tx) error {
			got, err := tx.SessionsOverLimit(ctx, 2, 0)
			want := []store.SessionRef{{OwnerID: ownerA, ID: "sess_a1"}, {OwnerID: ownerA, ID: "sess_a3"}}
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("SessionsOverLimit(2) = %v, %v; want %v (A's least recently active)", got, err, want)
			}
			got, err = tx.SessionsOverLimit(ctx, 1, 2)
			want = []store.SessionRef{{OwnerID: ownerA, ID: "sess_a1"}, {OwnerID: ownerA, ID: "sess_a3"}}
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("SessionsOverLimit(1, limit 2) = %v, %v; want %v", got, err, want)
			}
			got, err = tx.SessionsOverLimit(ctx, 4, 0)
			if err != nil || len(got) != 0 {
				t.Fatalf("SessionsOverLimit(4) = %v, %v; want none", got, err)
			}
			n, err := tx.CountSessions(ctx, ownerA)
			if err != nil || n != 4 {
				t.Fatalf("CountSessions(A) = %d, %v", n, err)
			}
			return nil
		})
	})

	t.Run("Stats", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		populate(t, st, ownerA, "alice")
		read(t, st, func(tx store.Tx) error {
			tables, err := tx.TableStats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rows := map[string]int64{}
			var names []string
			for _, ts := range tables {
				rows[ts.Name] = ts.Rows
				names = append(names, ts.Name)
				if ts.Bytes < -1 {
					t.Fatalf("table %s: %d bytes", ts.Name, ts.Bytes)
				}
			}
			if !slices.IsSorted(names) {
				t.Fatalf("tables not by name: %v", names)
			}
			for name, n := range map[string]int64{"users": 1, "api_keys": 2, "sessions": 2, "messages": 5, "message_writes": 1, "runs": 1,
				"actions": 2, "run_events": 3, "memories": 2, "idempotency": 2, "message_deletions": 1} {
				if rows[name] != n {
					t.Fatalf("table %s: %d rows, want %d (tables %v)", name, rows[name], n, rows)
				}
			}
			users, err := tx.UserStats(ctx)
			if err != nil || len(users) != 1 {
				t.Fatalf("UserStats = %v, %v", users, err)
			}
			u := users[0]
			if u.UserID != ownerA || u.Name != "alice" || u.Sessions != 2 || u.Messages != 5 || u.Runs != 1 ||
				u.Actions != 2 || u.Events != 3 || u.LongTermItems != 2 || u.RequestIDs != 2 || u.Bytes <= 0 {
				t.Fatalf("UserStats = %+v", u)
			}
			return nil
		})
	})
}
