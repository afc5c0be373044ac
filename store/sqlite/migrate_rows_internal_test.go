package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/store/storetest"
)

// A database written before migration 0018 (messages, revisions and fork chains naming their
// session by id, messages holding their run and request ids in every row) reads back the same
// after it (storetest.CheckOldRows): each message with its ids, a fork whose parent was deleted
// (copies of rows stored at the parent's versions, which its own writes use too) and a fork with
// an old chain included, and appends go on.
func TestMigrateCompactRows(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.db")
	sdb, err := sql.Open("sqlite", path+"?_pragma=foreign_keys(1)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	before := ms[:0:0]
	for _, m := range ms {
		if m.Version < 18 {
			before = append(before, m)
		}
	}
	stx, err := sdb.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := conn{tx: stx}
	if err := c.ExecScript(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if err := dialect.ApplyMigrations(ctx, c, before, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, q := range storetest.OldRows {
		if _, err := stx.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := stx.Commit(); err != nil {
		t.Fatal(err)
	}
	sdb.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.CheckOldRows(t, db)
}
