package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

func testTransactions(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("Ping", func(t *testing.T) {
		if err := open(t).Ping(t.Context()); err != nil {
			t.Fatalf("Ping: %v", err)
		}
	})

	t.Run("RollbackOnError", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "sess_1", at(0))
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			if err := tx.InsertUser(ctx, &carryon.User{ID: "usr_1", Name: "alice", CreatedAt: at(0)}); err != nil {
				return err
			}
			if err := tx.InsertSession(ctx, s); err != nil {
				return err
			}
			if err := tx.InsertMessages(ctx, ownerA, []*carryon.Message{newMessage(s.ID, 1, 2, "lost")}); err != nil {
				return err
			}
			if err := tx.PutIdempotency(ctx, &store.IdempotencyRecord{OwnerID: ownerA, Key: "req", Fingerprint: "fp",
				State: store.IdemDone, CreatedAt: at(0), ExpiresAt: at(100)}); err != nil {
				return err
			}
			return errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("Write returned %v, want the function's error", err)
		}
		read(t, st, func(tx store.Tx) error {
			_, err := tx.GetUser(ctx, "alice")
			wantCode(t, err, carryon.ENOTFOUND)
			_, err = tx.GetSession(ctx, ownerA, s.ID)
			wantCode(t, err, carryon.ENOTFOUND)
			_, err = tx.GetIdempotency(ctx, ownerA, "req")
			wantCode(t, err, carryon.ENOTFOUND)
			return nil
		})

		// A store error inside fn rolls back the earlier writes of the same transaction too.
		insertSession(t, st, s)
		appendMessages(t, st, s, "one")
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			if err := tx.InsertSession(ctx, newSession(ownerA, "sess_2", at(1))); err != nil {
				return err
			}
			return tx.InsertMessages(ctx, ownerA, []*carryon.Message{newMessage(s.ID, 1, 3, "dup")})
		})
		wantCode(t, err, carryon.ECONFLICT)
		read(t, st, func(tx store.Tx) error {
			_, err := tx.GetSession(ctx, ownerA, "sess_2")
			wantCode(t, err, carryon.ENOTFOUND)
			return nil
		})
	})

	t.Run("ReadSnapshot", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "sess_1", at(0))
		insertSession(t, st, s)
		appendMessages(t, st, s, "one")

		done := make(chan error, 1)
		read(t, st, func(tx store.Tx) error {
			first, err := tx.GetSession(ctx, ownerA, s.ID)
			if err != nil {
				return err
			}
			// A writer commits while this transaction is open (or waits for it, on a store that
			// serialises readers and writers); either way this transaction must not see it.
			go func() {
				done <- st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
					cur, err := tx.GetSession(ctx, ownerA, s.ID)
					if err != nil {
						return err
					}
					prev := cur.Version
					cur.Version, cur.LastSeq, cur.MessageCount, cur.Title = prev+1, 2, 2, "changed"
					if err := tx.InsertMessages(ctx, ownerA, []*carryon.Message{newMessage(s.ID, 2, cur.Version, "two")}); err != nil {
						return err
					}
					return tx.UpdateSession(ctx, cur, prev)
				})
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("concurrent write: %v", err)
				}
				done <- nil
			case <-time.After(300 * time.Millisecond):
			}
			again, err := tx.GetSession(ctx, ownerA, s.ID)
			if err != nil {
				return err
			}
			if err := diffSession(again, first); err != nil {
				t.Errorf("a read transaction saw a concurrent commit: %v", err)
			}
			msgs, err := tx.LastMessages(ctx, ownerA, first, 10)
			if err != nil {
				return err
			}
			if len(msgs) != 1 {
				t.Errorf("a read transaction saw %d messages, want the 1 of its snapshot", len(msgs))
			}
			return nil
		})
		if err := <-done; err != nil {
			t.Fatalf("concurrent write: %v", err)
		}
		if got := getSession(t, st, ownerA, s.ID); got.Title != "changed" || got.LastSeq != 2 {
			t.Fatalf("after the read, the write is not visible: %+v", got)
		}
	})
}
