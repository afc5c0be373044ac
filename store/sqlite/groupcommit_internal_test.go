package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/carryon-hub/carryon/internal/store"
)

func user(name string) *carryon.User {
	return &carryon.User{ID: "usr_" + name, Name: name, CreatedAt: time.Unix(1, 0).UTC()}
}

// waitPending polls until n writers wait behind the running batch.
func waitPending(t *testing.T, db *DB, n int) {
	t.Helper()
	poll.Eventually(t, fmt.Sprintf("%d writers queued", n), func() bool {
		db.w.mu.Lock()
		defer db.w.mu.Unlock()
		return len(db.w.pending) == n
	})
}

// holdLead starts a Write that runs fn only once release is called, so that the writers started
// meanwhile queue behind it and commit together in the next batch; release returns its error.
func holdLead(ctx context.Context, db *DB, fn func(_ context.Context, tx store.Tx) error) (release func() error) {
	let, first, started := make(chan struct{}), make(chan error, 1), make(chan struct{})
	go func() {
		first <- db.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			close(started)
			<-let // hold the lead while the others queue
			return fn(ctx, tx)
		})
	}()
	<-started
	return func() error {
		close(let)
		return <-first
	}
}

// The writers that queue behind a running transaction commit together in the next one, and each
// keeps its own outcome: a failing, a panicking and a cancelled member change nothing and fail
// nobody else; a member reads its own writes and those of the members before it.
func TestGroupCommitMembers(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()

	release := holdLead(ctx, db, func(_ context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user("first")) })

	var mu sync.Mutex
	txs := map[store.Tx]bool{}
	seen := func(tx store.Tx) {
		mu.Lock()
		txs[tx] = true
		mu.Unlock()
	}
	cancelled, cancel := context.WithCancel(ctx)
	boom := errors.New("boom")
	members := []struct {
		name string
		ctx  context.Context
		fn   func(_ context.Context, tx store.Tx) error
		want func(error) bool
	}{
		{"a", ctx, func(_ context.Context, tx store.Tx) error {
			seen(tx)
			if err := tx.InsertUser(ctx, user("a")); err != nil {
				return err
			}
			_, err := tx.GetUser(ctx, "a") // its own write
			return err
		}, func(err error) bool { return err == nil }},
		{"fails", ctx, func(_ context.Context, tx store.Tx) error {
			seen(tx)
			if err := tx.InsertUser(ctx, user("fails")); err != nil {
				return err
			}
			return boom
		}, func(err error) bool { return errors.Is(err, boom) }},
		{"panics", ctx, func(_ context.Context, tx store.Tx) error {
			seen(tx)
			if err := tx.InsertUser(ctx, user("panics")); err != nil {
				return err
			}
			panic("member panics")
		}, func(err error) bool { return carryon.ErrorCode(err) == carryon.EINTERNAL }},
		{"conflict", ctx, func(_ context.Context, tx store.Tx) error {
			seen(tx)
			return tx.InsertUser(ctx, user("a")) // taken by a, one member before
		}, func(err error) bool { return carryon.ErrorCode(err) == carryon.ECONFLICT }},
		{"cancelled", cancelled, func(_ context.Context, tx store.Tx) error {
			return tx.InsertUser(ctx, user("cancelled"))
		}, func(err error) bool { return errors.Is(err, context.Canceled) }},
		{"b", ctx, func(_ context.Context, tx store.Tx) error {
			seen(tx)
			if _, err := tx.GetUser(ctx, "a"); err != nil { // a's write, not committed yet
				return fmt.Errorf("a member does not see the member before it: %w", err)
			}
			if _, err := tx.GetUser(ctx, "fails"); carryon.ErrorCode(err) != carryon.ENOTFOUND {
				return fmt.Errorf("a failed member's write is visible: %v", err)
			}
			return tx.InsertUser(ctx, user("b"))
		}, func(err error) bool { return err == nil }},
	}
	errs := make([]chan error, len(members))
	for i, m := range members {
		errs[i] = make(chan error, 1)
		go func() { errs[i] <- db.Write(m.ctx, m.fn) }()
		waitPending(t, db, i+1)
	}
	cancel() // the cancelled member leaves the queue before its batch starts
	waitPending(t, db, len(members)-1)
	if err := release(); err != nil {
		t.Fatalf("first: %v", err)
	}
	for i, m := range members {
		if err := <-errs[i]; !m.want(err) {
			t.Errorf("%s: unexpected error %v", m.name, err)
		}
	}
	if len(txs) != 1 {
		t.Errorf("the queued writers ran in %d transactions, want 1", len(txs))
	}
	err = db.Read(ctx, func(tx store.Tx) error {
		for name, want := range map[string]bool{"first": true, "a": true, "b": true, "fails": false, "panics": false, "cancelled": false} {
			_, err := tx.GetUser(ctx, name)
			if got := err == nil; got != want {
				t.Errorf("user %s stored: %v, want %v (%v)", name, got, want, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A commit that fails fails every member that succeeded, and the members that failed keep
// their own errors; nothing is stored.
func TestGroupCommitCommitError(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	boom := errors.New("boom")
	ok := &member{ctx: ctx, fn: func(_ context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user("ok")) }}
	bad := &member{ctx: ctx, fn: func(_ context.Context, tx store.Tx) error { return boom }}
	// A deferred foreign key that is violated at COMMIT fails the commit itself.
	breaker := &member{ctx: ctx, fn: func(_ context.Context, x store.Tx) error {
		stx := x.(*tx).tx
		if _, err := stx.Exec(`PRAGMA defer_foreign_keys = ON`); err != nil {
			return err
		}
		_, err := stx.Exec(`INSERT INTO api_keys (id, user_id, prefix, hash, created_at) VALUES ('k', 'usr_nobody', 'p', 'h', 0)`)
		return err
	}}
	db.runBatch([]*member{ok, bad, breaker})
	if ok.err == nil || breaker.err == nil || !errors.Is(bad.err, boom) {
		t.Fatalf("after a failed commit: ok %v, breaker %v, bad %v", ok.err, breaker.err, bad.err)
	}
	err = db.Read(ctx, func(tx store.Tx) error {
		_, err := tx.GetUser(ctx, "ok")
		if carryon.ErrorCode(err) != carryon.ENOTFOUND {
			t.Errorf("a member of a failed commit is stored: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The database takes writes again.
	if err := db.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user("later")) }); err != nil {
		t.Fatalf("a write after a failed commit: %v", err)
	}
}

// Many concurrent writers all commit, each exactly once, in fewer transactions than writers.
func TestGroupCommitConcurrent(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- db.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user(fmt.Sprint("u", i))) })
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	err = db.Read(ctx, func(tx store.Tx) error {
		us, err := tx.ListUsers(ctx)
		if len(us) != n {
			t.Errorf("%d users stored, want %d", len(us), n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A Write inside a write transaction's fn fails at once instead of waiting for itself.
func TestGroupCommitNested(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	var inner error
	err = db.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		inner = db.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user("inner")) })
		return tx.InsertUser(ctx, user("outer"))
	})
	if err != nil || carryon.ErrorCode(inner) != carryon.EINTERNAL {
		t.Fatalf("outer %v, nested %v", err, inner)
	}
	// Other goroutines' writes still queue as usual while a batch runs.
	if err := db.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user("after")) }); err != nil {
		t.Fatal(err)
	}
}
