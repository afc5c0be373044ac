package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// testNestedWrites: a Write given the context of a write's fn, on that goroutine or on another
// one, is refused with EINTERNAL at once (a driver that batches writers would otherwise wait for
// the batch that waits for it); a Write of another store from inside fn is not refused. The outer
// write commits.
func testNestedWrites(t *testing.T, open func(t *testing.T) store.Store) {
	st, other := open(t), open(t)
	user := func(id string) *carryon.User { return &carryon.User{ID: id, Name: id, CreatedAt: at(0)} }
	var same, elsewhere, otherStore error
	err := st.Write(t.Context(), func(ctx context.Context, tx store.Tx) error {
		same = st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user("usr_same")) })
		done := make(chan error, 1)
		go func() {
			done <- st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user("usr_goroutine")) })
		}()
		select {
		case elsewhere = <-done:
		case <-time.After(30 * time.Second):
			t.Error("a Write from another goroutine with fn's context waited for the write it runs inside")
		}
		otherStore = other.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user("usr_other")) })
		return tx.InsertUser(ctx, user("usr_outer"))
	})
	if err != nil {
		t.Fatalf("outer write: %v", err)
	}
	wantCode(t, same, carryon.EINTERNAL)
	wantCode(t, elsewhere, carryon.EINTERNAL)
	if otherStore != nil {
		t.Fatalf("a write to another store from inside fn: %v", otherStore)
	}
	read(t, st, func(tx store.Tx) error {
		for id, want := range map[string]bool{"usr_outer": true, "usr_same": false, "usr_goroutine": false} {
			_, err := tx.GetUser(t.Context(), id)
			if got := err == nil; got != want {
				t.Errorf("user %s stored: %v, want %v (%v)", id, got, want, err)
			}
		}
		return nil
	})
}
