package storetest

import (
	"reflect"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// testMessageTombstones: MessageTombstones lists a session's deleted seqs in a range, with the
// version and time of each delete and the message's role and kind, never its content; a fork lists the tombstones it
// copied (at version 1) and its own, not the parent's later ones, also once the parent is
// deleted; another owner gets not_found.
func testMessageTombstones(t *testing.T, open func(t *testing.T) store.Store) {
	t.Parallel()
	st := open(t)
	fam := newForkFamily(t, st)
	deleteMessage(t, st, fam.p, 2) // P: version 7 before, 8 after
	k := forkCopying(t, st, fam.p, "sess_k", 6, 8, 1)
	deleteMessage(t, st, fam.p, 5) // P at version 9
	deleteMessage(t, st, k, 6)     // K at version 2

	type stone struct{ Seq, Version int64 }
	want := func(s *carryon.Session, owner string, after, upTo int64, w ...stone) {
		t.Helper()
		read(t, st, func(tx store.Tx) error {
			got, err := tx.MessageTombstones(t.Context(), owner, s, after, upTo)
			if err != nil {
				t.Fatalf("%s MessageTombstones(%d, %d) = %v", s.ID, after, upTo, err)
			}
			stones := []stone{}
			for _, m := range got {
				if !m.Deleted || m.SessionID != s.ID || m.Content != "" || m.Role != carryon.RoleUser || m.Kind != carryon.KindMessage || !m.CreatedAt.Equal(at(50)) {
					t.Fatalf("%s tombstone %+v: want deleted, of %s, at %v, a user message's, with no content", s.ID, m, s.ID, at(50))
				}
				stones = append(stones, stone{m.Seq, m.Version})
			}
			if w == nil {
				w = []stone{}
			}
			if !reflect.DeepEqual(stones, w) {
				t.Fatalf("%s MessageTombstones(%d, %d) = %v, want %v", s.ID, after, upTo, stones, w)
			}
			return nil
		})
	}
	want(fam.p, ownerA, 0, 6, stone{2, 8}, stone{5, 9})
	want(fam.p, ownerA, 1, 2, stone{2, 8})
	want(fam.p, ownerA, 2, 4)
	want(fam.p, ownerA, 4, 99, stone{5, 9})
	want(k, ownerA, 0, 99, stone{2, 1}, stone{6, 2})
	want(fam.f, ownerA, 0, 99) // forked before the deletes
	read(t, st, func(tx store.Tx) error {
		if _, err := tx.MessageTombstones(t.Context(), ownerB, fam.p, 0, 99); carryon.ErrorCode(err) != carryon.ENOTFOUND {
			t.Fatalf("another owner's tombstones: %v, want not_found", err)
		}
		return nil
	})
	// With the parent deleted the fork is materialised; its tombstones still name the role.
	write(t, st, func(tx store.Tx) error { return tx.DeleteSession(t.Context(), ownerA, fam.p.ID) })
	want(k, ownerA, 0, 99, stone{2, 1}, stone{6, 2})
}
