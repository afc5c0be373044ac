package storetest

import (
	"maps"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// testStorage checks SessionStorage and UserStorage on the rows populate stores, with a summary
// and, for bob, one long message more.
func testStorage(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	ctx := t.Context()
	populate(t, st, ownerA, "alice")
	populate(t, st, ownerB, "bob")
	a := getSession(t, st, ownerA, "sess_"+ownerA)
	appendSummary(t, st, a, "the summary", 4, `{"k":1}`)
	b := getSession(t, st, ownerB, "sess_"+ownerB)
	appendMessages(t, st, b, strings.Repeat("long ", 2000))

	rows := func(uses []carryon.StorageUse) map[string]int64 {
		out := map[string]int64{}
		for _, u := range uses {
			out[u.Kind] = u.Rows
		}
		return out
	}
	bytes := func(uses []carryon.StorageUse) map[string]int64 {
		out := map[string]int64{}
		for _, u := range uses {
			out[u.Kind] = u.Bytes
		}
		return out
	}

	t.Run("Session", func(t *testing.T) {
		read(t, st, func(tx store.Tx) error {
			got, err := tx.SessionStorage(ctx, ownerA, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, u := range got {
				kinds = append(kinds, u.Kind)
			}
			want := []string{carryon.StorageMessages, carryon.StorageCompactions, carryon.StorageMemoryRevisions, carryon.StorageRuns,
				carryon.StorageEvents, carryon.StorageJournal, carryon.StorageRequestIDs, carryon.StorageSearchIndex}
			if strings.Join(kinds, " ") != strings.Join(want, " ") {
				t.Fatalf("kinds = %v, want %v", kinds, want)
			}
			// Four messages (one deleted: its row stays), one summary, two revisions, one run with
			// three events and two actions, one request id of the session (the other has none),
			// and a search document for each message the session shows (not the deleted one).
			wantRows := map[string]int64{carryon.StorageMessages: 4, carryon.StorageCompactions: 1, carryon.StorageMemoryRevisions: 2,
				carryon.StorageRuns: 1, carryon.StorageEvents: 3, carryon.StorageJournal: 2, carryon.StorageRequestIDs: 1,
				carryon.StorageSearchIndex: 4}
			if r := rows(got); !maps.Equal(r, wantRows) {
				t.Fatalf("rows = %v, want %v", r, wantRows)
			}
			by := bytes(got)
			// The deleted message's row is there, its text is not (a tombstone redacts).
			if n := int64(len("one alice") + len("three alice") + len("m4")); by[carryon.StorageMessages] != n {
				t.Fatalf("message bytes = %d, want %d", by[carryon.StorageMessages], n)
			}
			if n := int64(len("the summary") + len(`{"k":1}`)); by[carryon.StorageCompactions] != n {
				t.Fatalf("compaction bytes = %d, want %d", by[carryon.StorageCompactions], n)
			}
			for _, k := range []string{carryon.StorageMemoryRevisions, carryon.StorageEvents, carryon.StorageJournal,
				carryon.StorageRequestIDs, carryon.StorageSearchIndex} {
				if by[k] <= 0 {
					t.Fatalf("%s: %d bytes (%v)", k, by[k], got)
				}
			}

			// A fork counts its own rows only.
			f, err := tx.SessionStorage(ctx, ownerA, "fork_"+ownerA)
			if err != nil {
				t.Fatal(err)
			}
			if r, by := rows(f), bytes(f); r[carryon.StorageMessages] != 1 || by[carryon.StorageMessages] != int64(len("four alice")) ||
				r[carryon.StorageRuns] != 0 || r[carryon.StorageMemoryRevisions] != 0 {
				t.Fatalf("fork storage = %v", f)
			}

			// Another user's session and a missing one are not found.
			_, err = tx.SessionStorage(ctx, ownerB, a.ID)
			wantCode(t, err, carryon.ENOTFOUND)
			_, err = tx.SessionStorage(ctx, ownerA, "sess_none")
			wantCode(t, err, carryon.ENOTFOUND)
			return nil
		})
	})

	t.Run("Users", func(t *testing.T) {
		read(t, st, func(tx store.Tx) error {
			users, err := tx.UserStorage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(users) != 2 || users[0].UserID != ownerB || users[1].UserID != ownerA || users[0].Name != "bob" {
				t.Fatalf("UserStorage = %+v; want bob (the long message) before alice", users)
			}
			if users[0].Bytes <= users[1].Bytes {
				t.Fatalf("UserStorage not by bytes: %+v", users)
			}
			u := users[1]
			wantRows := map[string]int64{carryon.StorageMessages: 5, carryon.StorageCompactions: 1, carryon.StorageMemoryRevisions: 2,
				carryon.StorageRuns: 1, carryon.StorageEvents: 3, carryon.StorageJournal: 2, carryon.StorageRequestIDs: 2,
				carryon.StorageSearchIndex: 5, carryon.StorageLongTerm: 2}
			if r := rows(u.Kinds); !maps.Equal(r, wantRows) {
				t.Fatalf("alice's rows = %v, want %v", r, wantRows)
			}
			var sumRows, sumBytes int64
			for _, k := range u.Kinds {
				sumRows += k.Rows
				sumBytes += k.Bytes
			}
			if u.Rows != sumRows || u.Bytes != sumBytes {
				t.Fatalf("alice's totals %d rows, %d bytes; kinds sum to %d, %d", u.Rows, u.Bytes, sumRows, sumBytes)
			}
			owners, err := tx.SessionOwners(ctx, []string{a.ID, b.ID, "sess_none"})
			if err != nil || len(owners) != 2 || owners[a.ID] != ownerA || owners[b.ID] != ownerB {
				t.Fatalf("SessionOwners = %v, %v", owners, err)
			}
			return nil
		})
	})
}
