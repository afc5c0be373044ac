package storetest

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// testSessionKeys checks that the rows of a session stay its own when a driver stores them under
// a key it may give again: a session with forks is deleted (its fork and the fork's fork keep the
// history they read through it), then the newest session, and a new session made after them
// reads only its own rows, and the forks do not read the new session's.
func testSessionKeys(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	ctx := t.Context()
	a := newSession(ownerA, "sess_a", at(0))
	insertSession(t, st, a)
	appendMessages(t, st, a, "a1")
	b := newSession(ownerA, "sess_b", at(1))
	insertSession(t, st, b)
	appendWrite(t, st, b, "req_b", "", 2)
	write(t, st, func(tx store.Tx) error {
		return tx.InsertWorkingMemoryRevision(ctx, ownerA, &carryon.WorkingMemoryRevision{SessionID: b.ID,
			WorkingMemoryVersion: 1, Version: b.Version, Patch: []byte(`{"goal":"b"}`), Document: carryon.WorkingMemory{"goal": "b"}, CreatedAt: at(2)})
	})
	c := fork(t, st, b, "sess_c", 2, b.Version)
	appendMessages(t, st, c, "c3")
	e := fork(t, st, c, "sess_e", 3, c.Version)
	appendMessages(t, st, e, "e4")
	write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, b.ID) })
	z := newSession(ownerA, "sess_z", at(3)) // the newest: deleted, and its key may be given again
	insertSession(t, st, z)
	appendWrite(t, st, z, "req_z", "run_z", 4)
	write(t, st, func(tx store.Tx) error {
		return tx.InsertWorkingMemoryRevision(ctx, ownerA, &carryon.WorkingMemoryRevision{SessionID: z.ID,
			WorkingMemoryVersion: 1, Version: z.Version, Patch: []byte(`{"goal":"z"}`), Document: carryon.WorkingMemory{"goal": "z"}, CreatedAt: at(3)})
	})
	write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, z.ID) })
	d := newSession(ownerA, "sess_d", at(3))
	insertSession(t, st, d)
	appendWrite(t, st, d, "req_d", "", 3)
	want := map[*carryon.Session][]string{
		a: {"a1"},
		c: {"m1", "m2", "c3"},
		e: {"m1", "m2", "c3", "e4"},
		d: {"m1", "m2", "m3"},
	}
	read(t, st, func(tx store.Tx) error {
		for s, w := range want {
			got, err := tx.MessagesAfter(ctx, ownerA, s, 0, 0)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(contents(got), w) {
				t.Errorf("%s reads %v, want %v", s.ID, contents(got), w)
			}
			ids := fmt.Sprint(writeIDs(got))
			if s == c && ids != "[req_b/ req_b/ /]" || s == d && ids != "[req_d/ req_d/ req_d/]" {
				t.Errorf("%s reads ids %s", s.ID, ids)
			}
		}
		revs, err := tx.ListWorkingMemoryRevisions(ctx, ownerA, d.ID, 0, 0)
		if err != nil || len(revs) != 0 {
			t.Errorf("the new session has revisions %v, %v", revs, err)
		}
		return nil
	})
}
