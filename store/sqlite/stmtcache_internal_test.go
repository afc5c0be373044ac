package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/storetest"
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
		if err := db.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user(name)) }); err != nil {
			t.Fatal(err)
		}
	}
	n := db.stmts.len()
	if n == 0 {
		t.Fatal("no statement stayed prepared after two writes")
	}
	if err := db.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user("c")) }); err != nil {
		t.Fatal(err)
	}
	if got := db.stmts.len(); got != n {
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
	if err := mem.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user("m")) }); err != nil {
		t.Fatal(err)
	}
	if mem.stmts != nil {
		t.Fatal("an in-memory database keeps statements prepared on its one connection's pool")
	}
}

// A read's statements stay prepared for the next read (the first read prepares them, a second
// prepares none), on every connection of the pool: reads held open together, on as many
// connections, return what one read alone does. A statement whose rows are being read can run
// again meanwhile (it is parsed on its own then). Run with -race.
func TestReadStatementsStayPrepared(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	chain := storetest.DeepChain(t, db, 30, 25)
	root, end := chain[0], chain[len(chain)-1]
	// read restores a session as a turn does: its row, its working memory, its last 20 messages
	// (from 20 levels of the chain at its end).
	read := func(tx store.Tx, s *carryon.Session) (string, error) {
		got, err := tx.GetSession(ctx, s.OwnerID, s.ID)
		if err != nil {
			return "", err
		}
		if _, _, err := tx.GetWorkingMemory(ctx, s.OwnerID, s.ID); err != nil {
			return "", err
		}
		msgs, err := tx.LastMessages(ctx, s.OwnerID, got, 20)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, m := range msgs {
			fmt.Fprintf(&b, "%d:%s ", m.Seq, m.Content)
		}
		return b.String(), nil
	}
	want := map[string]string{}
	for _, s := range []*carryon.Session{root, end} {
		if err := db.Read(ctx, func(tx store.Tx) error { want[s.ID], err = read(tx, s); return err }); err != nil {
			t.Fatal(err)
		}
	}
	n := db.stmts.len()
	if n == 0 {
		t.Fatal("no statement stayed prepared after a read")
	}
	for _, s := range []*carryon.Session{root, end} {
		err := db.Read(ctx, func(tx store.Tx) error {
			got, err := read(tx, s)
			if err == nil && got != want[s.ID] {
				t.Errorf("second read of %s: %s, want %s", s.ID, got, want[s.ID])
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := db.stmts.len(); got != n {
		t.Fatalf("the same reads prepared %d new statements", got-n)
	}

	// Readers on connections of their own: each waits in its transaction, which holds its
	// connection, until all have begun (and counted the connections in use), then reads a few
	// times, beside a writer.
	const readers = 6
	var begun, counted, done sync.WaitGroup
	begun.Add(readers)
	counted.Add(readers)
	errs := make(chan error, readers+1)
	for i := range readers {
		done.Add(1)
		go func() {
			defer done.Done()
			errs <- db.Read(ctx, func(tx store.Tx) error {
				if _, err := tx.GetUser(ctx, "usr_a"); err != nil && carryon.ErrorCode(err) != carryon.ENOTFOUND {
					return err // the transaction's snapshot starts here
				}
				begun.Done()
				begun.Wait()
				n := db.sql.Stats().InUse
				counted.Done()
				counted.Wait() // none ends before all counted
				if n < readers {
					return fmt.Errorf("%d connections in use by %d readers at once", n, readers)
				}
				for j := range 5 {
					s := []*carryon.Session{root, end}[(i+j)%2]
					got, err := read(tx, s)
					if err != nil {
						return err
					}
					if got != want[s.ID] {
						return fmt.Errorf("reader %d, read %d of %s: %s, want %s", i, j, s.ID, got, want[s.ID])
					}
				}
				return nil
			})
		}()
	}
	done.Add(1)
	go func() {
		defer done.Done()
		errs <- db.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user("w")) })
	}()
	done.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	// The rows of a statement are read while the same statement runs again, as a query and as
	// a row, in one transaction.
	err = db.Read(ctx, func(x store.Tx) error {
		c := x.(*tx).Tx.Conn
		const q = `SELECT seq FROM messages WHERE session_key = (SELECT session_key FROM sessions WHERE id = ?) ORDER BY seq`
		outer, err := c.Query(ctx, q, root.ID)
		if err != nil {
			return err
		}
		defer outer.Close()
		var seqs []int64
		for outer.Next() {
			var seq, first int64
			if err := outer.Scan(&seq); err != nil {
				return err
			}
			inner, err := c.Query(ctx, q, root.ID)
			if err != nil {
				return err
			}
			var k int
			for inner.Next() {
				k++
			}
			inner.Close()
			if err := c.QueryRow(ctx, q, root.ID).Scan(&first); err != nil {
				return err
			}
			if k != 30 || first != 1 {
				return fmt.Errorf("inside the loop: %d rows, first seq %d; want 30 and 1", k, first)
			}
			seqs = append(seqs, seq)
		}
		if err := outer.Err(); err != nil {
			return err
		}
		if len(seqs) != 30 || seqs[0] != 1 || seqs[29] != 30 {
			return fmt.Errorf("the outer loop read %v", seqs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	mem, err := Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	memChain := storetest.DeepChain(t, mem, 30, 25)
	err = mem.Read(ctx, func(tx store.Tx) error {
		got, err := read(tx, memChain[25])
		if err == nil && got != want[end.ID] {
			return fmt.Errorf("in memory: %s, want %s", got, want[end.ID])
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
