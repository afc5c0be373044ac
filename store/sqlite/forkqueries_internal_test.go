package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/sqlq"
	"github.com/carryon-hub/carryon/internal/store/storetest"
)

// countingConn counts the statements a transaction runs.
type countingConn struct {
	sqlq.Conn
	n int
}

func (c *countingConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	c.n++
	return c.Conn.Exec(ctx, q, args...)
}

func (c *countingConn) Query(ctx context.Context, q string, args ...any) (sqlq.Rows, error) {
	c.n++
	return c.Conn.Query(ctx, q, args...)
}

func (c *countingConn) QueryRow(ctx context.Context, q string, args ...any) sqlq.Row {
	c.n++
	return c.Conn.QueryRow(ctx, q, args...)
}

// Reading the last messages at the end of a fork chain takes the same few statements at depth
// 10 and at depth 1,000, whether the messages come from 20 levels or all from the root.
func TestForkReadsFlat(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	statements := func(end string, k int) int {
		stx, err := db.sql.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer stx.Rollback()
		x := newTx(conn{tx: stx}, true)
		c := &countingConn{Conn: x.Tx.Conn}
		x.Tx.Conn = c
		s, err := x.GetSession(ctx, "usr_a", end)
		if err != nil {
			t.Fatal(err)
		}
		c.n = 0
		msgs, err := x.LastMessages(ctx, "usr_a", s, k)
		if err != nil || len(msgs) != k {
			t.Fatalf("LastMessages(%d): %d messages, %v", k, len(msgs), err)
		}
		return c.n
	}
	own10 := storetest.DeepChain(t, db, 100, 10)
	own1000 := storetest.DeepChain(t, db, 100, 1000)
	empty10 := storetest.EmptyChain(t, db, 100, 10)
	empty1000 := storetest.EmptyChain(t, db, 100, 1000)
	for _, k := range []int{5, 20} {
		a, b := statements(own10[10].ID, k), statements(own1000[1000].ID, k)
		t.Logf("last %d, a message per fork: %d and %d statements", k, a, b)
		if a != b || b > 3 {
			t.Errorf("last %d of a chain with a message per fork: %d statements at depth 10, %d at depth 1,000", k, a, b)
		}
		a, b = statements(empty10[10].ID, k), statements(empty1000[1000].ID, k)
		if a != b || b > 3 {
			t.Errorf("last %d of a chain of empty forks: %d statements at depth 10, %d at depth 1,000", k, a, b)
		}
	}
}

// Forks stored without a chain (before migration fork_chains) get one when the database is next
// opened, and read as before.
func TestBackfillForkChains(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "f.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	chain := storetest.DeepChain(t, db, 5, 40)
	if _, err := db.sql.ExecContext(ctx, `DELETE FROM fork_chains`); err != nil {
		t.Fatal(err)
	}
	last := func(db *DB) []string {
		var out []string
		err := db.Read(ctx, func(tx store.Tx) error {
			msgs, err := tx.LastMessages(ctx, "usr_a", chain[40], 100)
			for _, m := range msgs {
				out = append(out, m.Content)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	walked := last(db)
	db.Close()
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM fork_chains`).Scan(&n); err != nil || n != 40 {
		t.Fatalf("%d fork chains after reopening (%v), want 40", n, err)
	}
	if got := last(db); len(got) != 45 || !slices.Equal(got, walked) {
		t.Fatalf("after the backfill: %v, before: %v", got, walked)
	}
}
