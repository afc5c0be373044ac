package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// idle lists, a page of limit at a time, the sessions of agent an idle extraction pass learns
// from with activity in [since, before).
func idle(t testing.TB, st store.Store, agent string, since, before time.Time, limit int) []string {
	t.Helper()
	q := store.IdleQuery{Agent: agent, Since: since, Before: before, Limit: limit}
	var ids []string
	for {
		var page []store.IdleSession
		read(t, st, func(tx store.Tx) (err error) { page, err = tx.IdleUnextracted(t.Context(), q); return err })
		for _, s := range page {
			ids = append(ids, s.OwnerID+"/"+s.ID)
		}
		if len(page) < limit {
			return ids
		}
		q.AfterActive, q.AfterID = page[len(page)-1].LastActiveAt, page[len(page)-1].ID
	}
}

// testExtractions: the extraction mark moves only from where it was, and the idle sessions of an
// agent with turns after their mark are listed in the window, by last activity, in pages.
func testExtractions(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	ctx := t.Context()
	mk := func(owner, id string, when time.Time, agent string, msgs int) *carryon.Session {
		s := newSession(owner, id, when)
		s.Agent = agent
		insertSession(t, st, s)
		for range msgs {
			appendMessages(t, st, s, "turn of "+id)
		}
		return s
	}
	mk(ownerA, "sess_old", at(10), "researcher", 2)
	done := mk(ownerA, "sess_done", at(20), "researcher", 2)
	mk(ownerB, "sess_b", at(20), "researcher", 1)
	mk(ownerA, "sess_tie", at(20), "researcher", 3)
	mk(ownerA, "sess_other", at(30), "writer", 2)
	mk(ownerA, "sess_empty", at(30), "researcher", 0)
	mk(ownerA, "sess_recent", at(100), "researcher", 2)
	closed := mk(ownerA, "sess_closed", at(30), "researcher", 2)
	write(t, st, func(tx store.Tx) error {
		cur, err := tx.GetSession(ctx, ownerA, closed.ID)
		if err != nil {
			return err
		}
		prev := cur.Version
		cur.Status, cur.Version = carryon.SessionClosed, cur.Version+1
		return tx.UpdateSession(ctx, cur, prev)
	})

	var moved bool
	write(t, st, func(tx store.Tx) (err error) {
		moved, err = tx.SetExtracted(ctx, ownerA, done.ID, 0, done.LastSeq, done.Version, at(40))
		return err
	})
	if !moved {
		t.Fatal("the first mark did not move from 0")
	}
	write(t, st, func(tx store.Tx) (err error) {
		moved, err = tx.SetExtracted(ctx, ownerA, done.ID, 0, 1, 1, at(41))
		return err
	})
	if moved {
		t.Fatal("a mark moved from 0 after another extraction moved it")
	}
	var seq int64
	read(t, st, func(tx store.Tx) (err error) { seq, err = tx.ExtractedSeq(ctx, ownerA, done.ID); return err })
	if seq != done.LastSeq {
		t.Fatalf("the mark is at %d, want %d", seq, done.LastSeq)
	}
	read(t, st, func(tx store.Tx) (err error) { seq, err = tx.ExtractedSeq(ctx, ownerB, done.ID); return err })
	if seq != 0 {
		t.Fatalf("another owner's mark of the session is %d, want 0", seq)
	}

	// In [at(15), at(50)): not the old one, the done one, the other agent's, the one with no
	// messages, the closed one or the recent one; the tie on last activity is ordered by id.
	want := []string{ownerB + "/sess_b", ownerA + "/sess_tie"}
	for _, limit := range []int{1, 2, 10} {
		if got := idle(t, st, "researcher", at(15), at(50), limit); !reflect.DeepEqual(got, want) {
			t.Fatalf("idle sessions (pages of %d) = %v, want %v", limit, got, want)
		}
	}
	appendMessages(t, st, done, "a new turn")
	if got := idle(t, st, "researcher", at(15), at(50), 10); len(got) != 3 || got[1] != ownerA+"/sess_done" {
		t.Fatalf("after a new turn of the extracted session: %v", got)
	}
	if got := idle(t, st, "writer", at(0), at(1000), 10); !reflect.DeepEqual(got, []string{ownerA + "/sess_other"}) {
		t.Fatalf("the writer's idle sessions = %v", got)
	}
}
