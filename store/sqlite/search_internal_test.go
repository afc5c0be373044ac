package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"

	"github.com/carryon-hub/carryon/internal/store/sqlq"
)

// TestLongTermSearchOwnerInIndex: the full-text index knows each document's owner, so a search
// matches only the owner's rows inside the index, before any ranking or join; items indexed
// before the index had an owner column are moved over by the migration and found as before.
func TestLongTermSearchOwnerInIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	// A database at schema version 4 (an index without owners) holding items of two owners.
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version > 4 {
			break
		}
		if _, err := raw.Exec(m.SQL); err != nil {
			t.Fatalf("migration %s: %v", m.Name, err)
		}
		if _, err := raw.Exec(`INSERT INTO schema_migrations VALUES (?, ?, 0)`, m.Version, m.Name); err != nil {
			t.Fatal(err)
		}
	}
	old := map[string]int{"usr_a": 3, "usr_b": 60} // B's many matches must not crowd A's out
	id := 0
	for owner, n := range old {
		for i := range n {
			id++
			text := fmt.Sprintf("%s drinks green tea, cup %d", owner, i)
			if _, err := raw.Exec(`INSERT INTO memories (id, owner_id, namespace, key, value, text, created_at, updated_at)
				VALUES (?, ?, 'prefs', ?, 'true', ?, ?, ?)`, id, owner, fmt.Sprint("k", i), text, sqlq.Micros(when), sqlq.Micros(when)); err != nil {
				t.Fatal(err)
			}
			if _, err := raw.Exec(`INSERT INTO memories_fts (rowid, doc) VALUES (?, ?)`, id, "prefs k\n"+text); err != nil {
				t.Fatal(err)
			}
		}
	}
	raw.Close()

	db, err := Open(ctx, path) // migrates to the latest schema
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.PutLongTermItem(ctx, "usr_a", &carryon.LongTermItem{Namespace: "prefs", Key: "new", Value: json.RawMessage(`1`),
			Text: "usr_a also likes tea", CreatedAt: when, UpdatedAt: when})
	})
	if err != nil {
		t.Fatal(err)
	}
	for owner, want := range map[string]int{"usr_a": old["usr_a"] + 1, "usr_b": old["usr_b"]} {
		// The index alone selects the owner's documents: nothing of the other owner is matched.
		var n int
		match := fmt.Sprintf(`owner : "%X" AND doc : ("tea" OR "cup")`, owner)
		if err := db.sql.QueryRow(`SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?`, match).Scan(&n); err != nil {
			t.Fatalf("the index cannot select %s's documents: %v", owner, err)
		}
		if n != want {
			t.Fatalf("the index selects %d documents of %s, want %d", n, owner, want)
		}
		var got []*carryon.LongTermItem
		err := db.Read(ctx, func(tx store.Tx) error {
			var err error
			got, err = tx.SearchLongTermItems(ctx, owner, store.LongTermSearchQuery{Text: "green tea", Now: when, Limit: 2})
			return err
		})
		if err != nil || len(got) != 2 || got[0].OwnerID != owner || got[1].OwnerID != owner {
			t.Fatalf("SearchLongTermItems(%s, limit 2) = %v, %v", owner, got, err)
		}
	}
}
