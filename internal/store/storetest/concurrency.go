package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

func testConcurrency(t *testing.T, open func(t *testing.T) store.Store) {
	// Two writers read the session at version N, then both store version N+1 conditionally on N:
	// exactly one wins, the other gets EVERSION with the winner's version and writes nothing.
	t.Run("VersionRace", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "sess_1", at(0))
		insertSession(t, st, s)
		for round := range 10 {
			var (
				ready, start sync.WaitGroup
				errs         [2]error
				seen         [2]int64
			)
			ready.Add(2)
			start.Add(1)
			var done sync.WaitGroup
			for i := range 2 {
				done.Go(func() {
					var cur *carryon.Session
					err := st.Read(ctx, func(tx store.Tx) error {
						var err error
						cur, err = tx.GetSession(ctx, ownerA, s.ID)
						return err
					})
					ready.Done()
					if err != nil {
						errs[i] = err
						return
					}
					start.Wait()
					prev := cur.Version
					seen[i] = prev
					cur.Version++
					cur.Title = fmt.Sprintf("round %d writer %d", round, i)
					errs[i] = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
						if err := tx.InsertMessages(ctx, ownerA, []*carryon.Message{
							newMessage(s.ID, int64(100*round+10*i+1), cur.Version, cur.Title),
						}); err != nil {
							return err
						}
						return tx.UpdateSession(ctx, cur, prev)
					})
				})
			}
			ready.Wait()
			start.Done()
			done.Wait()
			if seen[0] != seen[1] {
				t.Fatalf("round %d: writers read versions %d and %d", round, seen[0], seen[1])
			}
			n := seen[0]
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner < 0:
					winner = i
				case err == nil:
					t.Fatalf("round %d: both writers won at version %d", round, n)
				default:
					wantCode(t, err, carryon.EVERSION)
					if e, _ := carryon.AsError(err); e.CurrentVersion != n+1 {
						t.Fatalf("round %d: loser's CurrentVersion = %d, want %d", round, e.CurrentVersion, n+1)
					}
				}
			}
			if winner < 0 {
				t.Fatalf("round %d: no writer won", round)
			}
			got := getSession(t, st, ownerA, s.ID)
			if want := fmt.Sprintf("round %d writer %d", round, winner); got.Version != n+1 || got.Title != want {
				t.Fatalf("round %d: session at %d %q, want %d %q", round, got.Version, got.Title, n+1, want)
			}
			read(t, st, func(tx store.Tx) error {
				msgs, err := tx.MessagesAfter(ctx, ownerA, got, int64(100*round), 100)
				if err != nil {
					return err
				}
				if len(msgs) != 1 || msgs[0].Content != got.Title {
					t.Fatalf("round %d: messages %v, want only the winner's", round, contents(msgs))
				}
				return nil
			})
		}
	})

	// Write transactions are serialised, so read-check-write inside fn never loses an update:
	// every writer reads the latest row and appends the next seq.
	t.Run("SerialisedWrites", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "sess_1", at(0))
		insertSession(t, st, s)
		const writers, each = 8, 10
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					errs <- st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
						_, err := AppendTurn(ctx, tx, ownerA, s.ID, fmt.Sprintf("w%d-%d", w, i))
						return err
					})
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("serialised write failed: %v", err)
			}
		}
		got := getSession(t, st, ownerA, s.ID)
		if got.Version != 1+writers*each || got.LastSeq != writers*each || got.MessageCount != writers*each {
			t.Fatalf("after %d writes: version %d, last seq %d, count %d", writers*each, got.Version, got.LastSeq, got.MessageCount)
		}
		read(t, st, func(tx store.Tx) error {
			msgs, err := tx.MessagesAfter(ctx, ownerA, got, 0, 1000)
			if err != nil {
				return err
			}
			if len(msgs) != writers*each {
				t.Fatalf("%d messages, want %d", len(msgs), writers*each)
			}
			for i, m := range msgs {
				if m.Seq != int64(i+1) || m.Version != int64(i+2) {
					t.Fatalf("message %d: seq %d version %d", i, m.Seq, m.Version)
				}
			}
			return nil
		})
	})
}
