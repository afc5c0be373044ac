package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/carryon-hub/carryon/store"
)

// The statements of one write stay prepared for the next (a lone writer does not parse them
// again), bounded; an in-memory database, whose one connection a batch holds, keeps none.
func TestStatementsStayPrepared(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, name := range []string{"a", "b"} {
		if err := db.Write(ctx, func(tx store.Tx) error { return tx.InsertUser(ctx, user(name)) }); err != nil {
			t.Fatal(err)
		}
	}
	n := len(db.stmts.m)
	if n == 0 {
		t.Fatal("no statement stayed prepared after two writes")
	}
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.InsertUser(ctx, user("c")) }); err != nil {
		t.Fatal(err)
	}
	if got := len(db.stmts.m); got != n {
		t.Fatalf("the same write prepared %d new statements", got-n)
	}
	for _, name := range []string{"a", "b", "c"} {
		err := db.Read(ctx, func(tx store.Tx) error { _, err := tx.GetUser(ctx, name); return err })
		if err != nil {
			t.Fatalf("user %s: %v", name, err)
		}
	}

	mem, err := Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if err := mem.Write(ctx, func(tx store.Tx) error { return tx.InsertUser(ctx, user("m")) }); err != nil {
		t.Fatal(err)
	}
	if mem.stmts != nil {
		t.Fatal("an in-memory database keeps statements prepared on its one connection's pool")
	}
}
