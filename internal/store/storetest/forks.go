package storetest

import (
	"context"
	"reflect"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// forkFamily is a parent P with five messages, a fork F of P at seq 3 with two messages of its
// own, a fork G of F at seq 4 (F's own) with one message, and a fork H of F at seq 2 (inherited
// from P) with one message. P gets a sixth message after the forks, which none of them sees.
// Like the hub, a fork starts at version 1 of its own (seqs continue the parent's numbering,
// versions do not): message i of P is at version i+1; a fork's own messages at 2, 3, …
type forkFamily struct {
	p, f, g, h *carryon.Session
}

// fork makes a fork of parent at seq, taken at the parent's version v; the fork is at version 1.
func fork(t testing.TB, st store.Store, parent *carryon.Session, id string, seq, v int64) *carryon.Session {
	t.Helper()
	s := newSession(parent.OwnerID, id, at(100))
	s.ParentID, s.ForkSeq, s.ForkVersion = parent.ID, seq, v
	s.Version, s.LastSeq, s.MessageCount = 1, seq, seq
	insertSession(t, st, s)
	checkSession(t, getSession(t, st, parent.OwnerID, id), s)
	return s
}

func newForkFamily(t testing.TB, st store.Store) *forkFamily {
	var fam forkFamily
	fam.p = newSession(ownerA, "sess_p", at(0))
	insertSession(t, st, fam.p)
	appendMessages(t, st, fam.p, "p1", "p2", "p3", "p4", "p5") // versions 2..6
	fam.f = fork(t, st, fam.p, "sess_f", 3, 4)
	appendMessages(t, st, fam.f, "f4", "f5") // versions 2, 3 of F
	fam.g = fork(t, st, fam.f, "sess_g", 4, 2)
	appendMessages(t, st, fam.g, "g5") // version 2 of G
	fam.h = fork(t, st, fam.f, "sess_h", 2, 1)
	appendMessages(t, st, fam.h, "h3") // version 2 of H
	appendMessages(t, st, fam.p, "p6")
	return &fam
}

// famHistories is what each member of the family sees, in order.
var famHistories = map[string][]string{
	"sess_p": {"p1", "p2", "p3", "p4", "p5", "p6"},
	"sess_f": {"p1", "p2", "p3", "f4", "f5"},
	"sess_g": {"p1", "p2", "p3", "f4", "g5"},
	"sess_h": {"p1", "p2", "h3"},
}

// checkHistories checks the full history and every window of each session in ss.
func checkHistories(t testing.TB, st store.Store, ss ...*carryon.Session) {
	t.Helper()
	ctx := t.Context()
	read(t, st, func(tx store.Tx) error {
		for _, s := range ss {
			want := famHistories[s.ID]
			for k := 1; k <= len(want)+1; k++ {
				got, err := tx.LastMessages(ctx, ownerA, s, k)
				if err != nil {
					t.Fatalf("%s LastMessages(%d): %v", s.ID, k, err)
				}
				if w := want[max(0, len(want)-k):]; !reflect.DeepEqual(contents(got), w) {
					t.Fatalf("%s LastMessages(%d) = %v, want %v", s.ID, k, contents(got), w)
				}
				for i, m := range got {
					if m.Seq != int64(len(want)-len(got)+i+1) || m.SessionID != s.ID {
						t.Fatalf("%s LastMessages(%d)[%d] = seq %d of %s; want seq %d of %s", s.ID, k, i, m.Seq,
							m.SessionID, len(want)-len(got)+i+1, s.ID)
					}
				}
			}
			for after := 0; after <= len(want); after++ {
				for limit := 1; limit <= 3; limit++ {
					got, err := tx.MessagesAfter(ctx, ownerA, s, int64(after), limit)
					if err != nil {
						t.Fatalf("%s MessagesAfter(%d, %d): %v", s.ID, after, limit, err)
					}
					if w := want[after:min(len(want), after+limit)]; !reflect.DeepEqual(contents(got), w) {
						t.Fatalf("%s MessagesAfter(%d, %d) = %v, want %v", s.ID, after, limit, contents(got), w)
					}
				}
			}
		}
		return nil
	})
}

// checkSeqAtVersion checks SeqAtVersion of s for each version → seq.
func checkSeqAtVersion(t testing.TB, st store.Store, s *carryon.Session, want map[int64]int64) {
	t.Helper()
	read(t, st, func(tx store.Tx) error {
		for v, w := range want {
			got, err := tx.SeqAtVersion(t.Context(), ownerA, s, v)
			if err != nil || got != w {
				t.Fatalf("%s SeqAtVersion(%d) = %d, %v; want %d", s.ID, v, got, err, w)
			}
		}
		return nil
	})
}

func testForks(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("ReadThrough", func(t *testing.T) {
		st := open(t)
		fam := newForkFamily(t, st)
		checkHistories(t, st, fam.p, fam.f, fam.g, fam.h)
		for _, s := range []*carryon.Session{fam.p, fam.f, fam.g, fam.h} {
			wantHistory(t, st, s, famHistories[s.ID]...)
		}
		// A fork has all it inherits from its first version on, whatever versions the parent
		// stored those messages at; its own messages are compared with its own versions.
		// F: inherited p1..p3, own f4@2, f5@3.
		checkSeqAtVersion(t, st, fam.f, map[int64]int64{1: 3, 2: 4, 3: 5, 99: 5})
		// G: inherited p1..p3, f4, own g5@2.
		checkSeqAtVersion(t, st, fam.g, map[int64]int64{1: 4, 2: 5, 99: 5})
		// H: inherited p1, p2 (p3 is past its fork point), own h3@2.
		checkSeqAtVersion(t, st, fam.h, map[int64]int64{1: 2, 2: 3, 99: 3})
		checkSeqAtVersion(t, st, fam.p, map[int64]int64{1: 0, 2: 1, 6: 5, 7: 6})
		read(t, st, func(tx store.Tx) error {
			_, err := tx.LastMessages(t.Context(), ownerB, fam.g, 10)
			wantCode(t, err, carryon.ENOTFOUND)
			_, err = tx.MessagesAfter(t.Context(), ownerB, fam.g, 0, 10)
			wantCode(t, err, carryon.ENOTFOUND)
			return nil
		})
	})

	t.Run("ForkSeqTaken", func(t *testing.T) {
		st := open(t)
		fam := newForkFamily(t, st)
		// A fork's own numbering continues after its fork point; a seq it already has is taken.
		err := st.Write(t.Context(), func(_ context.Context, tx store.Tx) error {
			return tx.InsertMessages(t.Context(), ownerA, []*carryon.Message{newMessage(fam.f.ID, 4, 7, "again")})
		})
		wantCode(t, err, carryon.ECONFLICT)
	})

	t.Run("DeleteRoot", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		fam := newForkFamily(t, st)
		write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, fam.p.ID) })
		read(t, st, func(tx store.Tx) error {
			_, err := tx.GetSession(ctx, ownerA, fam.p.ID)
			wantCode(t, err, carryon.ENOTFOUND)
			return nil
		})
		if got := getSession(t, st, ownerA, fam.f.ID); got.ParentID == fam.p.ID {
			t.Fatalf("fork still points at its deleted parent")
		}
		checkHistories(t, st, fam.f, fam.g, fam.h)
		checkSeqAtVersion(t, st, fam.f, map[int64]int64{1: 3, 2: 4, 3: 5, 99: 5})
		checkSeqAtVersion(t, st, fam.g, map[int64]int64{1: 4, 2: 5, 99: 5})
		// The fork's copied part is its own now: appending goes on as before.
		appendMessages(t, st, fam.f, "f6")
		famHistoriesF := append(append([]string{}, famHistories["sess_f"]...), "f6")
		read(t, st, func(tx store.Tx) error {
			got, err := tx.LastMessages(ctx, ownerA, fam.f, 10)
			if err != nil || !reflect.DeepEqual(contents(got), famHistoriesF) {
				t.Fatalf("F after append = %v, %v; want %v", contents(got), err, famHistoriesF)
			}
			return nil
		})
		checkHistories(t, st, fam.g, fam.h)
	})

	t.Run("DeleteMiddle", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		fam := newForkFamily(t, st)
		write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, fam.f.ID) })
		checkHistories(t, st, fam.p, fam.g, fam.h)
		checkSeqAtVersion(t, st, fam.g, map[int64]int64{1: 4, 2: 5, 99: 5})
		checkSeqAtVersion(t, st, fam.h, map[int64]int64{1: 2, 2: 3, 99: 3})
		// Then the root: the grandchildren still keep everything.
		write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, fam.p.ID) })
		checkHistories(t, st, fam.g, fam.h)
	})

	t.Run("DeleteLeaf", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		fam := newForkFamily(t, st)
		write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, fam.g.ID) })
		checkHistories(t, st, fam.p, fam.f, fam.h)
	})
}
