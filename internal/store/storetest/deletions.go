package storetest

import (
	"context"
	"reflect"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// deleteMessage tombstones seq of s in one write that moves s to its next version (as the hub
// does), and updates s to the stored row.
func deleteMessage(t testing.TB, st store.Store, s *carryon.Session, seq int64) {
	t.Helper()
	write(t, st, func(tx store.Tx) error {
		cur, err := tx.GetSession(t.Context(), s.OwnerID, s.ID)
		if err != nil {
			return err
		}
		if err := tx.DeleteMessage(t.Context(), s.OwnerID, cur, seq, cur.Version+1, at(50)); err != nil {
			return err
		}
		prev := cur.Version
		cur.Version++
		cur.MessageCount--
		if err := tx.UpdateSession(t.Context(), cur, prev); err != nil {
			return err
		}
		*s = *cur
		return nil
	})
}

// forkCopying makes a fork as fork does, then copies the parent's tombstones as of version v,
// and checks how many it copied.
func forkCopying(t testing.TB, st store.Store, parent *carryon.Session, id string, seq, v, copied int64) *carryon.Session {
	t.Helper()
	s := fork(t, st, parent, id, seq, v)
	write(t, st, func(tx store.Tx) error {
		n, err := tx.CopyMessageDeletions(t.Context(), parent.OwnerID, s, v)
		if err == nil && n != copied {
			t.Fatalf("fork %s of %s at version %d copied %d tombstones, want %d", id, parent.ID, v, n, copied)
		}
		return err
	})
	return s
}

// wantHistory checks every window a reader can ask of s: the last k for each k, and every page
// forwards and backwards.
func wantHistory(t testing.TB, st store.Store, s *carryon.Session, want ...string) {
	t.Helper()
	ctx := t.Context()
	read(t, st, func(tx store.Tx) error {
		for k := 1; k <= len(want)+1; k++ {
			got, err := tx.LastMessages(ctx, ownerA, s, k)
			if w := want[max(0, len(want)-k):]; err != nil || !reflect.DeepEqual(contents(got), w) {
				t.Fatalf("%s LastMessages(%d) = %v, %v; want %v", s.ID, k, contents(got), err, w)
			}
		}
		all, err := tx.MessagesAfter(ctx, ownerA, s, 0, 0)
		if err != nil || !reflect.DeepEqual(contents(all), want) {
			t.Fatalf("%s MessagesAfter(0) = %v, %v; want %v", s.ID, contents(all), err, want)
		}
		// Paging from each visible message's seq continues exactly after it.
		for i, m := range all {
			for limit := 1; limit <= 2; limit++ {
				got, err := tx.MessagesAfter(ctx, ownerA, s, m.Seq, limit)
				if w := want[i+1 : min(len(want), i+1+limit)]; err != nil || !reflect.DeepEqual(contents(got), w) {
					t.Fatalf("%s MessagesAfter(%d, %d) = %v, %v; want %v", s.ID, m.Seq, limit, contents(got), err, w)
				}
				// And backwards, before it.
				got, err = tx.MessagesBefore(ctx, ownerA, s, m.Seq, limit)
				if w := want[max(0, i-limit):i]; err != nil || !reflect.DeepEqual(contents(got), w) {
					t.Fatalf("%s MessagesBefore(%d, %d) = %v, %v; want %v", s.ID, m.Seq, limit, contents(got), err, w)
				}
			}
		}
		return nil
	})
}

func testMessageDeletions(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("HidesFromTheDeleterOnly", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		fam := newForkFamily(t, st)
		deleteMessage(t, st, fam.p, 2) // P at version 8
		wantHistory(t, st, fam.p, "p1", "p3", "p4", "p5", "p6")
		if got := getSession(t, st, ownerA, fam.p.ID); got.MessageCount != 5 || got.LastSeq != 6 {
			t.Fatalf("P after delete: count %d, last seq %d; want 5, 6", got.MessageCount, got.LastSeq)
		}
		// Forks made before the delete keep the message.
		checkHistories(t, st, fam.f, fam.g, fam.h)
		// A fork's delete of an inherited message is its own.
		deleteMessage(t, st, fam.f, 1)
		wantHistory(t, st, fam.f, "p2", "p3", "f4", "f5")
		wantHistory(t, st, fam.p, "p1", "p3", "p4", "p5", "p6")
		checkHistories(t, st, fam.g, fam.h)
		// Its own message too, the last one: the seq is not given again.
		deleteMessage(t, st, fam.f, 5)
		wantHistory(t, st, fam.f, "p2", "p3", "f4")
		appendMessages(t, st, fam.f, "f6")
		wantHistory(t, st, fam.f, "p2", "p3", "f4", "f6")
		read(t, st, func(tx store.Tx) error {
			got, err := tx.MessagesAfter(t.Context(), ownerA, fam.f, 4, 0)
			if err != nil || len(got) != 1 || got[0].Seq != 6 {
				t.Fatalf("F after 4 = %v, %v; want f6 at seq 6", seqs(got), err)
			}
			return nil
		})
	})

	t.Run("ForksAfter", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		fam := newForkFamily(t, st)
		deleteMessage(t, st, fam.p, 2) // P: version 7 before, 8 after
		// A fork made after the delete does not see the message; one at a version before does.
		k := forkCopying(t, st, fam.p, "sess_k", 6, 8, 1)
		wantHistory(t, st, k, "p1", "p3", "p4", "p5", "p6")
		l := forkCopying(t, st, fam.p, "sess_l", 6, 7, 0)
		wantHistory(t, st, l, "p1", "p2", "p3", "p4", "p5", "p6")
		// A tombstone past the fork point is not copied; the fork's copies pass on to its forks.
		deleteMessage(t, st, fam.p, 6) // P at version 9
		m := forkCopying(t, st, fam.p, "sess_m", 5, 9, 1)
		wantHistory(t, st, m, "p1", "p3", "p4", "p5")
		n := forkCopying(t, st, k, "sess_n", 6, 1, 1)
		wantHistory(t, st, n, "p1", "p3", "p4", "p5", "p6")
		// The parent's delete: forks are materialised with their tombstones.
		write(t, st, func(tx store.Tx) error { return tx.DeleteSession(t.Context(), ownerA, fam.p.ID) })
		wantHistory(t, st, k, "p1", "p3", "p4", "p5", "p6")
		wantHistory(t, st, l, "p1", "p2", "p3", "p4", "p5", "p6")
		wantHistory(t, st, m, "p1", "p3", "p4", "p5")
		wantHistory(t, st, n, "p1", "p3", "p4", "p5", "p6")
	})

	t.Run("ErasedStaysGone", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		r := newSession(ownerA, "sess_r", at(0))
		insertSession(t, st, r)
		appendMessages(t, st, r, "r1", "r2", "r3") // versions 2..4
		// No fork sees r2, so the delete erases its row. A fork at a version before the delete
		// must not bring it back, not even as an empty message: it gets the tombstone too.
		deleteMessage(t, st, r, 2) // version 5
		old := forkCopying(t, st, r, "sess_old", 3, 4, 1)
		wantHistory(t, st, old, "r1", "r3")
		// A row a fork still sees is not erased: a fork at a version before its delete sees it.
		keep := forkCopying(t, st, r, "sess_keep", 3, 5, 1)
		appendMessages(t, st, r, "r4") // version 6
		deleteMessage(t, st, r, 4)     // version 7: keep does not see seq 4 (its fork seq is 3)
		wantHistory(t, st, keep, "r1", "r3")
		// r4 is erased too: a fork at version 6, when r4 was there, gets both tombstones.
		seer := forkCopying(t, st, r, "sess_seer", 4, 6, 2)
		wantHistory(t, st, seer, "r1", "r3")
	})

	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		ctx := t.Context()
		fam := newForkFamily(t, st)
		deleteMessage(t, st, fam.p, 2)
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			for _, c := range []struct {
				s   *carryon.Session
				own string
				seq int64
			}{
				{fam.p, ownerA, 2},  // deleted already
				{fam.p, ownerA, 7},  // never stored
				{fam.p, ownerA, 0},  // no seq
				{fam.h, ownerA, 4},  // p4 is past H's fork point
				{fam.g, ownerB, 1},  // another owner's
				{fam.p, ownerB, 1},  // another owner's
				{fam.f, ownerA, 99}, // beyond everything
			} {
				err := tx.DeleteMessage(ctx, c.own, c.s, c.seq, c.s.Version+1, at(60))
				if carryon.ErrorCode(err) != carryon.ENOTFOUND {
					t.Errorf("delete %d of %s by %s = %v, want not_found", c.seq, c.s.ID, c.own, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		checkHistories(t, st, fam.f, fam.g, fam.h)
		wantHistory(t, st, fam.p, "p1", "p3", "p4", "p5", "p6")
	})
}
