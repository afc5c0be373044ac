package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon/internal/store"
)

// TwoHandles writes to one database from two handles a and b (two *DB on one file or one server,
// as two processes or instances would have) with goroutines goroutines each, every one making
// each read-check-write appends in Write with a read alongside in Read: the driver's way of
// serialising writers (BEGIN IMMEDIATE and the busy timeout, row locks) must let no write fail
// and lose none. A driver's tests call it with handles they opened on one fresh database.
func TwoHandles(t *testing.T, a, b store.Store, goroutines, each int) {
	t.Helper()
	ctx := t.Context()
	s := newSession("usr_1", "sess_1", at(0))
	insertSession(t, a, s)
	var wg sync.WaitGroup
	errs := make(chan error, 2*2*goroutines*each)
	for h, db := range []store.Store{a, b} {
		for g := range goroutines {
			wg.Go(func() {
				for i := range each {
					errs <- db.Write(ctx, func(ctx context.Context, tx store.Tx) error {
						_, err := AppendTurn(ctx, tx, s.OwnerID, s.ID, fmt.Sprintf("h%d g%d i%d", h, g, i))
						return err
					})
					// Readers run alongside the writers.
					errs <- db.Read(ctx, func(tx store.Tx) error {
						cur, err := tx.GetSession(ctx, s.OwnerID, s.ID)
						if err != nil {
							return err
						}
						_, err = tx.LastMessages(ctx, s.OwnerID, cur, 5)
						return err
					})
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent access failed: %v", err)
		}
	}
	total := int64(2 * goroutines * each)
	read(t, b, func(tx store.Tx) error {
		got, err := tx.GetSession(ctx, s.OwnerID, s.ID)
		if err != nil {
			return err
		}
		msgs, err := tx.MessagesAfter(ctx, s.OwnerID, got, 0, 0)
		if err != nil {
			return err
		}
		if got.Version != 1+total || got.LastSeq != total || int64(len(msgs)) != total {
			t.Errorf("session at version %d, last seq %d, %d messages; want %d, %d, %d",
				got.Version, got.LastSeq, len(msgs), 1+total, total, total)
		}
		return nil
	})
}
