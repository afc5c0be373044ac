package storetest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// search lists the owner's sessions that q selects (all of them, newest first) and returns their
// ids. A search with terms and no plan runs by every plan (probe windows of 1 and 2 too, and
// probing from 1 and 3 matches), which must agree.
func search(t testing.TB, st store.Store, owner string, q store.SessionQuery) []string {
	t.Helper()
	q.Now = at(0)
	list := func(q store.SessionQuery) []string {
		var got []*carryon.Session
		read(t, st, func(tx store.Tx) (err error) { got, err = tx.ListSessions(t.Context(), owner, q); return err })
		return sessionIDs(got)
	}
	want := list(q)
	if len(q.Terms) == 0 || q.Plan != store.SearchPlanAuto || q.ProbeWindow != 0 || q.ProbeAbove != 0 {
		return want
	}
	for _, p := range searchPlans {
		p.Terms, p.Limit, p.AfterCreated, p.AfterID = q.Terms, q.Limit, q.AfterCreated, q.AfterID
		p.Status, p.Now, p.Metadata, p.Agent, p.ExternalID = q.Status, q.Now, q.Metadata, q.Agent, q.ExternalID
		p.CreatedAfter, p.CreatedBefore, p.UpdatedAfter, p.UpdatedBefore = q.CreatedAfter, q.CreatedBefore, q.UpdatedAfter, q.UpdatedBefore
		if got := list(p); !reflect.DeepEqual(got, want) {
			t.Fatalf("search %s for %q (limit %d after %q) by plan %d window %d above %d = %v, by the default plan %v",
				owner, q.Terms, q.Limit, q.AfterID, p.Plan, p.ProbeWindow, p.ProbeAbove, got, want)
		}
	}
	return want
}

// searchPlans are the plans search compares (each a SessionQuery holding only its plan).
var searchPlans = []store.SessionQuery{
	{Plan: store.SearchPlanCollect},
	{Plan: store.SearchPlanProbe},
	{Plan: store.SearchPlanAuto, ProbeWindow: 1, ProbeAbove: 1},
	{Plan: store.SearchPlanAuto, ProbeWindow: 2, ProbeAbove: 1},
	{Plan: store.SearchPlanAuto, ProbeAbove: 3},
}

// terms is a SessionQuery searching for text.
func terms(text string) store.SessionQuery {
	ts, _ := store.SearchQueryTerms(text)
	return store.SessionQuery{Terms: ts}
}

// wantFound checks which of the owner's sessions a search for text finds.
func wantFound(t testing.TB, st store.Store, owner, text string, want ...string) {
	t.Helper()
	if got := search(t, st, owner, terms(text)); !reflect.DeepEqual(got, orNone(want)) {
		t.Fatalf("search %s for %q = %v, want %v", owner, text, got, want)
	}
}

// orNone is ids, or an empty list for none (sessionIDs answers one).
func orNone(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// forkIndexed makes a fork as the hub does: the session, its parent's tombstones as of version
// v, its search documents.
func forkIndexed(t testing.TB, st store.Store, parent *carryon.Session, id string, seq, v int64) *carryon.Session {
	t.Helper()
	s := fork(t, st, parent, id, seq, v)
	write(t, st, func(tx store.Tx) error {
		if _, err := tx.CopyMessageDeletions(t.Context(), parent.OwnerID, s, v); err != nil {
			return err
		}
		return tx.IndexFork(t.Context(), parent.OwnerID, s, v)
	})
	return s
}

func testSearch(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("Text", func(t *testing.T) {
		st := open(t)
		a := newSession(ownerA, "sess_a", at(1))
		a.Title = "Quarterly Planning"
		b := newSession(ownerA, "sess_b", at(2))
		b.Title = "other"
		other := newSession(ownerB, "sess_other", at(3))
		for _, s := range []*carryon.Session{a, b, other} {
			insertSession(t, st, s)
		}
		appendMessages(t, st, a, "the deploy failed on Tuesday", "rollback done")
		appendMessages(t, st, b, "Deploy succeeded; Café ouvert", "nothing here")
		appendMessages(t, st, other, "deploy of another user")
		wantFound(t, st, ownerA, "deploy", "sess_b", "sess_a") // newest first, as without a search
		wantFound(t, st, ownerA, "DEPLOY failed", "sess_a")    // every word, in one message, any case
		wantFound(t, st, ownerA, "deploy rollback")            // the words are in two messages: no match
		wantFound(t, st, ownerA, "roll", "sess_a")             // the last word as a prefix
		wantFound(t, st, ownerA, "roll done")                  // only the last one
		wantFound(t, st, ownerA, "planning", "sess_a")         // the title
		wantFound(t, st, ownerA, "quarter plan", "sess_a")     // the title, as substrings
		wantFound(t, st, ownerA, "CAFÉ", "sess_b")
		wantFound(t, st, ownerB, "deploy", "sess_other") // another owner's are never found
		wantFound(t, st, ownerA, "another")              // nor counted
		wantFound(t, st, ownerA, "zebra")                // nothing
		q := terms("deploy")
		q.Limit = 1
		page := search(t, st, ownerA, q)
		last := getSession(t, st, ownerA, page[0])
		q.AfterCreated, q.AfterID = last.CreatedAt, last.ID
		if got := search(t, st, ownerA, q); !reflect.DeepEqual(append(page, got...), []string{"sess_b", "sess_a"}) {
			t.Fatalf("pages of a search = %v then %v, want sess_b then sess_a", page, got)
		}
	})
	t.Run("Filters", func(t *testing.T) {
		st := open(t)
		for i, meta := range []string{`{"project":"x","n":"1"}`, `{"project":"x","n":1}`, `{"project":"y"}`, ``} {
			s := newSession(ownerA, "sess_"+string(rune('a'+i)), at(10*i))
			s.Metadata, s.UpdatedAt, s.Agent = json.RawMessage(meta), at(10*i+5), []string{"one", "two"}[i%2]
			if meta == "" {
				s.Metadata = nil
			}
			insertSession(t, st, s)
		}
		b := newSession(ownerB, "sess_other", at(0))
		b.Metadata = json.RawMessage(`{"project":"x"}`)
		insertSession(t, st, b)
		for _, c := range []struct {
			name string
			q    store.SessionQuery
			want []string
		}{
			{"one key", store.SessionQuery{Metadata: []store.MetadataMatch{{Key: "project", Value: "x"}}}, []string{"sess_b", "sess_a"}},
			{"two keys", store.SessionQuery{Metadata: []store.MetadataMatch{{Key: "project", Value: "x"}, {Key: "n", Value: "1"}}}, []string{"sess_a"}},
			{"strings only", store.SessionQuery{Metadata: []store.MetadataMatch{{Key: "n", Value: "1"}}}, []string{"sess_a"}},
			{"missing key", store.SessionQuery{Metadata: []store.MetadataMatch{{Key: "nope", Value: "x"}}}, []string{}},
			{"agent", store.SessionQuery{Agent: "two"}, []string{"sess_d", "sess_b"}},
			{"created after", store.SessionQuery{CreatedAfter: at(10)}, []string{"sess_d", "sess_c"}},
			{"created before", store.SessionQuery{CreatedBefore: at(10)}, []string{"sess_a"}},
			{"updated between", store.SessionQuery{UpdatedAfter: at(5), UpdatedBefore: at(30)}, []string{"sess_c", "sess_b"}},
			{"everything", store.SessionQuery{Agent: "one", CreatedAfter: at(-1), Metadata: []store.MetadataMatch{{Key: "project", Value: "y"}}}, []string{"sess_c"}},
		} {
			if got := search(t, st, ownerA, c.q); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s: got %v, want %v", c.name, got, c.want)
			}
		}
	})
	t.Run("Deleted", func(t *testing.T) {
		st := open(t)
		p := newSession(ownerA, "sess_p", at(0))
		p.Title = ""
		insertSession(t, st, p)
		appendMessages(t, st, p, "alpha secret", "beta", "gamma") // seqs 1..3, versions 2..4
		f := forkIndexed(t, st, p, "sess_f", 3, p.Version)        // made before the deletes: keeps what it shows
		deleteMessage(t, st, p, 1)                                // version 5
		deleteMessage(t, st, p, 2)                                // version 6; f still shows both
		wantFound(t, st, ownerA, "secret", "sess_f")
		wantFound(t, st, ownerA, "beta", "sess_f")
		wantFound(t, st, ownerA, "gamma", "sess_f", "sess_p")
		// A fork of p as it was before the deletes shows seq 1 and 2 (f keeps their rows): it is
		// found by them; a fork of p now is not.
		old := forkIndexed(t, st, p, "sess_old", 3, 4)
		now := forkIndexed(t, st, p, "sess_now", 3, p.Version)
		wantFound(t, st, ownerA, "secret", "sess_old", "sess_f")
		wantFound(t, st, ownerA, "gamma", "sess_old", "sess_now", "sess_f", "sess_p")
		deleteMessage(t, st, f, 1)
		deleteMessage(t, st, old, 1)
		wantFound(t, st, ownerA, "secret")
		appendMessages(t, st, now, "delta own")
		wantFound(t, st, ownerA, "delta", "sess_now")
		// Deleting the parent hands its rows to its forks: they are found as before.
		write(t, st, func(tx store.Tx) error { return tx.DeleteSession(t.Context(), ownerA, p.ID) })
		wantFound(t, st, ownerA, "gamma", "sess_old", "sess_now", "sess_f")
		wantFound(t, st, ownerA, "beta", "sess_old", "sess_f")
	})
	t.Run("DeletedSession", func(t *testing.T) {
		// The newest session's key may be given again after it is deleted: its documents went
		// with it, so the next session with the key is not found by its text.
		st := open(t)
		s := newSession(ownerA, "sess_gone", at(0))
		insertSession(t, st, s)
		appendMessages(t, st, s, "ghost words")
		write(t, st, func(tx store.Tx) error { return tx.DeleteSession(t.Context(), ownerA, s.ID) })
		n := newSession(ownerA, "sess_new", at(1))
		insertSession(t, st, n)
		wantFound(t, st, ownerA, "ghost")
	})
	t.Run("Forget", func(t *testing.T) {
		st := open(t)
		populate(t, st, ownerA, "alice")
		populate(t, st, ownerB, "bob")
		wantFound(t, st, ownerA, "alice", "fork_usr_a", "sess_usr_a")
		wantFound(t, st, ownerA, "two") // deleted in populate
		write(t, st, func(tx store.Tx) error { _, err := tx.MarkForgetting(t.Context(), ownerA, at(0)); return err })
		forget(t, st, ownerA, 2)
		s := newSession(ownerA, "sess_again", at(1))
		insertSession(t, st, s)
		wantFound(t, st, ownerA, "alice")
		wantFound(t, st, ownerB, "bob", "fork_usr_b", "sess_usr_b")
	})
}
