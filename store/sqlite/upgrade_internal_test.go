package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// openAfterUpgrade makes a database file at the schema before migration version upto (every
// migration below it applied), stores rows in it with the statements given, then opens it as a
// server does, which applies the migrations from upto on. The database is closed when the test
// ends.
func openAfterUpgrade(t *testing.T, upto int, rows []string) *DB {
	t.Helper()
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
		if m.Version < upto {
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
	for _, q := range rows {
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
	t.Cleanup(func() { db.Close() })
	return db
}
