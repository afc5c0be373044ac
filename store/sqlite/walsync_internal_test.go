package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/carryon-hub/carryon/internal/store"
)

// holdFlush replaces the WAL's fsync with one that, once armed, tells entered and waits for
// release (or returns fail) before it flushes.
type holdFlush struct {
	mu      sync.Mutex
	armed   bool
	fail    error
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

// unblock releases the held fsyncs (once): deferred after Close, which waits for them.
func (h *holdFlush) unblock() { h.once.Do(func() { close(h.release) }) }

func installHoldFlush(t *testing.T) *holdFlush {
	h := &holdFlush{entered: make(chan struct{}, 64), release: make(chan struct{})}
	old := flushFile
	flushFile = func(f *os.File) error {
		h.mu.Lock()
		armed, fail := h.armed, h.fail
		h.mu.Unlock()
		if armed {
			h.entered <- struct{}{}
			<-h.release
		}
		if fail != nil {
			return fail
		}
		return old(f)
	}
	t.Cleanup(func() { flushFile = old })
	return h
}

func (h *holdFlush) arm(fail error) {
	h.mu.Lock()
	h.armed, h.fail = true, fail
	h.mu.Unlock()
}

// openHeld opens a file database whose WAL fsyncs h holds once armed; it is closed at the end of
// the test, after h lets the held fsyncs go (Close waits for them).
func openHeld(t *testing.T) (*DB, *holdFlush) {
	h := installHoldFlush(t)
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.unblock(); db.Close() })
	return db, h
}

// waitBlocked polls until n callers wait in ws.wait for the held fsync, or done says one returned.
func waitBlocked(t *testing.T, ws *walSync, n int, done <-chan error, what string) {
	t.Helper()
	poll.Eventually(t, fmt.Sprintf("%d callers waiting for the fsync", n), func() bool {
		select {
		case err := <-done:
			t.Fatalf("%s returned (%v) while the fsync of the commit it depends on was held", what, err)
		default:
		}
		ws.mu.Lock()
		defer ws.mu.Unlock()
		return ws.waiting >= n
	})
}

// At synchronous=FULL a Write returns only after the fsync that covers its commit, and a Read
// that saw a commit returns only after that fsync; meanwhile the next batch runs its members
// (the fsync is outside the write lock).
func TestCommitReturnsAfterItsFsync(t *testing.T) {
	db, h := openHeld(t)
	ctx := t.Context()
	h.arm(nil)

	first := make(chan error, 1)
	go func() {
		first <- db.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user("first")) })
	}()
	select {
	case <-h.entered: // committed; its fsync is held
	case err := <-first:
		t.Fatalf("Write returned (%v) before its fsync", err)
	}

	// The next batch runs while the fsync is held.
	ran, second := make(chan struct{}), make(chan error, 1)
	go func() {
		second <- db.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			close(ran)
			return tx.InsertUser(ctx, user("second"))
		})
	}()
	<-ran

	// A read that sees the first commit waits for its fsync.
	read, saw := make(chan error, 1), make(chan struct{})
	go func() {
		read <- db.Read(ctx, func(tx store.Tx) error {
			_, err := tx.GetUser(ctx, "usr_first")
			close(saw)
			return err
		})
	}()
	<-saw
	waitBlocked(t, db.ws, 2, read, "Read") // the second batch's leader and the reader
	for _, c := range []chan error{first, second, read} {
		select {
		case err := <-c:
			t.Fatalf("returned (%v) while the fsync was held", err)
		default:
		}
	}
	h.unblock()
	for name, c := range map[string]chan error{"first write": first, "second write": second, "read": read} {
		if err := <-c; err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// An fsync that fails fails the writes it was to cover and every write and read after it.
func TestFailedFsyncIsFinal(t *testing.T) {
	db, h := openHeld(t)
	ctx := context.Background()
	h.arm(errors.New("input/output error"))
	h.unblock()
	check := func(what string, err error) {
		t.Helper()
		if carryon.ErrorCode(err) != carryon.EINTERNAL || !strings.Contains(err.Error(), "fsync") {
			t.Fatalf("%s: %v, want EINTERNAL about the fsync", what, err)
		}
	}
	check("write", db.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user("lost")) }))
	h.mu.Lock()
	h.armed, h.fail = false, nil // the disk "recovers": what it dropped is still unknown
	h.mu.Unlock()
	check("later write", db.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user("later")) }))
	check("read", db.Read(ctx, func(tx store.Tx) error { _, err := tx.GetUser(ctx, "usr_lost"); return err }))
}

// A read marked store.WithReadAhead returns without waiting for the fsync of what it saw.
func TestReadAheadDoesNotWait(t *testing.T) {
	db, h := openHeld(t)
	ctx := t.Context()
	h.arm(nil)
	first := make(chan error, 1)
	go func() {
		first <- db.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user("first")) })
	}()
	<-h.entered // committed; its fsync is held
	err := db.Read(store.WithReadAhead(ctx), func(tx store.Tx) error { _, err := tx.GetUser(ctx, "usr_first"); return err })
	if err != nil {
		t.Fatal(err)
	}
	h.unblock()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
}

// CommitSyncs counts the WAL's fsyncs after commits at FULL: one for a lone write, none for a
// failed one; at NORMAL SQLite does its own and the count stays 0.
func TestCommitSyncsCountsTheFsyncs(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before := db.CommitSyncs()
	for i := range 3 {
		if err := db.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user(fmt.Sprint("u", i))) }); err != nil {
			t.Fatal(err)
		}
	}
	if got := db.CommitSyncs() - before; got != 3 {
		t.Errorf("3 writes one after another made %d fsyncs, want 3", got)
	}
	n := db.CommitSyncs()
	if err := db.Write(ctx, func(context.Context, store.Tx) error { return errors.New("no") }); err == nil {
		t.Fatal("a write whose function fails succeeded")
	}
	if got := db.CommitSyncs(); got != n {
		t.Errorf("a rolled-back write made %d fsyncs", got-n)
	}
	normal, err := Open(ctx, filepath.Join(t.TempDir(), "n.db"), WithSynchronous("NORMAL"))
	if err != nil {
		t.Fatal(err)
	}
	defer normal.Close()
	if err := normal.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user("n")) }); err != nil {
		t.Fatal(err)
	}
	if got := normal.CommitSyncs(); got != 0 {
		t.Errorf("at NORMAL CommitSyncs is %d, want 0", got)
	}
}
