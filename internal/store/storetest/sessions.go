package storetest

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

func testSessions(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("InsertGet", func(t *testing.T) {
		st := open(t)
		s := newSession(ownerA, "sess_1", at(0))
		s.MessageCount, s.LastSeq, s.WorkingMemoryVersion = 2, 2, 1
		insertSession(t, st, s)
		checkSession(t, getSession(t, st, ownerA, s.ID), s)

		bare := newSession(ownerA, "sess_2", at(1))
		bare.Metadata, bare.Title, bare.Agent = nil, "", ""
		insertSession(t, st, bare)
		checkSession(t, getSession(t, st, ownerA, bare.ID), bare)

		read(t, st, func(tx store.Tx) error {
			_, err := tx.GetSession(t.Context(), ownerB, s.ID)
			wantCode(t, err, carryon.ENOTFOUND)
			_, err = tx.GetSession(t.Context(), ownerA, "sess_missing")
			wantCode(t, err, carryon.ENOTFOUND)
			return nil
		})
		// The id is taken for everyone, not only for its owner.
		for _, owner := range []string{ownerA, ownerB} {
			err := st.Write(t.Context(), func(_ context.Context, tx store.Tx) error {
				return tx.InsertSession(t.Context(), newSession(owner, s.ID, at(5)))
			})
			wantCode(t, err, carryon.ECONFLICT)
		}
		checkSession(t, getSession(t, st, ownerA, s.ID), s)
	})

	t.Run("ExternalID", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "sess_1", at(0))
		s.ExternalID = "adk-1"
		insertSession(t, st, s)
		checkSession(t, getSession(t, st, ownerA, s.ID), s)
		// Another owner may use the same external id; sessions without one never collide.
		other := newSession(ownerB, "sess_2", at(1))
		other.ExternalID = "adk-1"
		insertSession(t, st, other)
		insertSession(t, st, newSession(ownerA, "sess_3", at(2)))
		insertSession(t, st, newSession(ownerA, "sess_4", at(3)))
		// The same owner may not: the second row is refused and nothing of it is stored.
		dup := newSession(ownerA, "sess_5", at(4))
		dup.ExternalID = "adk-1"
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertSession(ctx, dup) })
		wantCode(t, err, carryon.ECONFLICT)
		read(t, st, func(tx store.Tx) error {
			_, err := tx.GetSession(ctx, ownerA, dup.ID)
			wantCode(t, err, carryon.ENOTFOUND)
			for _, c := range []struct {
				owner, ext string
				want       []string
			}{{ownerA, "adk-1", []string{"sess_1"}}, {ownerB, "adk-1", []string{"sess_2"}}, {ownerA, "adk-2", nil}} {
				got, err := tx.ListSessions(ctx, c.owner, store.SessionQuery{ExternalID: c.ext, Now: at(0), Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, g := range got {
					ids = append(ids, g.ID)
				}
				if !slices.Equal(ids, c.want) {
					t.Fatalf("ListSessions(%s, external %q) = %v, want %v", c.owner, c.ext, ids, c.want)
				}
			}
			return nil
		})
		// Deleting the session frees its external id.
		write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, s.ID) })
		insertSession(t, st, dup)
		checkSession(t, getSession(t, st, ownerA, dup.ID), dup)
	})

	t.Run("Update", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "sess_1", at(0))
		insertSession(t, st, s)

		upd := *s
		upd.Title, upd.Status, upd.Version = "renamed", carryon.SessionClosed, 2
		upd.UpdatedAt, upd.LastActiveAt, upd.ExpiresAt = at(10), at(11), at(12)
		upd.IdleTTLSeconds, upd.MessageCount, upd.LastSeq, upd.WorkingMemoryVersion = 60, 7, 8, 3
		upd.Metadata = json.RawMessage(`{"other":true}`)
		write(t, st, func(tx store.Tx) error { return tx.UpdateSession(ctx, &upd, 1) })
		checkSession(t, getSession(t, st, ownerA, s.ID), &upd)

		stale := upd
		stale.Title, stale.Version = "stale", 3
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.UpdateSession(ctx, &stale, 1) })
		wantCode(t, err, carryon.EVERSION)
		if e, _ := carryon.AsError(err); e.CurrentVersion != 2 {
			t.Fatalf("CurrentVersion = %d, want 2", e.CurrentVersion)
		}
		checkSession(t, getSession(t, st, ownerA, s.ID), &upd)

		foreign := upd
		foreign.OwnerID, foreign.Version = ownerB, 3
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.UpdateSession(ctx, &foreign, 2) })
		wantCode(t, err, carryon.ENOTFOUND)
		if e, _ := carryon.AsError(err); e.CurrentVersion != 0 {
			t.Fatalf("ENOTFOUND leaks the version of a foreign session: %d", e.CurrentVersion)
		}
		missing := upd
		missing.ID = "sess_missing"
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.UpdateSession(ctx, &missing, 2) })
		wantCode(t, err, carryon.ENOTFOUND)
		checkSession(t, getSession(t, st, ownerA, s.ID), &upd)

		// The profile a session was made with stays: an update does not rebind it.
		rebound := upd
		rebound.Agent, rebound.Version = "other", 3
		write(t, st, func(tx store.Tx) error { return tx.UpdateSession(ctx, &rebound, 2) })
		if got := getSession(t, st, ownerA, s.ID); got.Agent != "researcher" || got.Version != 3 {
			t.Fatalf("after an update naming another agent: agent %q version %d, want researcher at 3", got.Agent, got.Version)
		}
	})

	t.Run("ListOrderAndPaging", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		// Sessions come newest first by creation; two share a CreatedAt and the id breaks the tie,
		// descending. Activity (LastActiveAt) does not move them.
		var want []string
		for i, c := range []struct {
			id      string
			created int
		}{{"sess_a", 1}, {"sess_b", 5}, {"sess_c", 3}, {"sess_d", 5}, {"sess_e", 2}, {"sess_f", 4}} {
			s := newSession(ownerA, c.id, at(20-i))
			s.CreatedAt = at(c.created)
			insertSession(t, st, s)
		}
		insertSession(t, st, newSession(ownerB, "sess_z", at(9)))
		want = []string{"sess_d", "sess_b", "sess_f", "sess_c", "sess_e", "sess_a"}

		var all []*carryon.Session
		read(t, st, func(tx store.Tx) error {
			var err error
			all, err = tx.ListSessions(ctx, ownerA, store.SessionQuery{Now: at(0), Limit: 100})
			return err
		})
		if got := sessionIDs(all); !reflect.DeepEqual(got, want) {
			t.Fatalf("ListSessions = %v, want %v", got, want)
		}
		checkSession(t, all[0], getSession(t, st, ownerA, "sess_d"))

		for _, limit := range []int{1, 2, 4} {
			var paged []string
			q := store.SessionQuery{Now: at(0), Limit: limit}
			for range 10 {
				var page []*carryon.Session
				read(t, st, func(tx store.Tx) error {
					var err error
					page, err = tx.ListSessions(ctx, ownerA, q)
					return err
				})
				if len(page) > limit {
					t.Fatalf("page of %d sessions, limit %d", len(page), limit)
				}
				if len(page) == 0 {
					break
				}
				paged = append(paged, sessionIDs(page)...)
				last := page[len(page)-1]
				q.AfterCreated, q.AfterID = last.CreatedAt, last.ID
			}
			if !reflect.DeepEqual(paged, want) {
				t.Fatalf("paged by %d = %v, want %v", limit, paged, want)
			}
		}
	})

	t.Run("ListStatus", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		now := at(100)
		mk := func(id string, status carryon.SessionStatus, expires time.Time) {
			s := newSession(ownerA, id, at(len(id)))
			s.Status, s.ExpiresAt = status, expires
			insertSession(t, st, s)
		}
		mk("sess_active", carryon.SessionActive, now.Add(time.Second))
		mk("sess_lapsed", carryon.SessionActive, now.Add(-time.Second))
		mk("sess_lapsed_now", carryon.SessionActive, now) // expiry at exactly now counts as expired
		mk("sess_expired", carryon.SessionExpired, now.Add(time.Hour))
		mk("sess_closed", carryon.SessionClosed, now.Add(-time.Hour))
		foreign := newSession(ownerB, "sess_foreign", at(1))
		foreign.ExpiresAt = now.Add(time.Hour)
		insertSession(t, st, foreign)

		for status, want := range map[carryon.SessionStatus][]string{
			"":                     {"sess_active", "sess_closed", "sess_expired", "sess_lapsed", "sess_lapsed_now"},
			carryon.SessionActive:  {"sess_active"},
			carryon.SessionExpired: {"sess_expired", "sess_lapsed", "sess_lapsed_now"},
			carryon.SessionClosed:  {"sess_closed"},
		} {
			read(t, st, func(tx store.Tx) error {
				got, err := tx.ListSessions(ctx, ownerA, store.SessionQuery{Status: status, Now: now, Limit: 100})
				if err != nil {
					return err
				}
				ids := sessionIDs(got)
				slices.Sort(ids)
				if !reflect.DeepEqual(ids, want) {
					t.Fatalf("status %q: %v, want %v", status, ids, want)
				}
				return nil
			})
		}
	})

	t.Run("Delete", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "sess_1", at(0))
		insertSession(t, st, s)
		other := newSession(ownerA, "sess_2", at(0))
		insertSession(t, st, other)
		appendMessages(t, st, s, "one", "two")
		appendMessages(t, st, other, "keep")
		write(t, st, func(tx store.Tx) error {
			return tx.InsertWorkingMemoryRevision(ctx, ownerA, &carryon.WorkingMemoryRevision{
				SessionID: s.ID, WorkingMemoryVersion: 1, Version: 4, Document: carryon.WorkingMemory{"goal": "g"}, CreatedAt: at(3),
			})
		})
		// Request ids recorded with the session go with it; those of another session, of no
		// session, and of another owner stay.
		ids := []store.IdempotencyRecord{
			{OwnerID: ownerA, Key: "req_of_s", SessionID: s.ID}, {OwnerID: ownerA, Key: "req_of_s_too", SessionID: s.ID},
			{OwnerID: ownerA, Key: "req_of_other", SessionID: other.ID}, {OwnerID: ownerA, Key: "req_of_none"},
			{OwnerID: ownerB, Key: "req_of_s", SessionID: s.ID},
		}
		for _, r := range ids {
			r.Fingerprint, r.State, r.Result, r.CreatedAt, r.ExpiresAt = "fp", store.IdemDone, []byte(`{}`), at(3), at(1000)
			write(t, st, func(tx store.Tx) error { return tx.PutIdempotency(ctx, &r) })
		}
		for _, c := range []struct{ owner, id string }{{ownerB, s.ID}, {ownerA, "sess_missing"}} {
			err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.DeleteSession(ctx, c.owner, c.id) })
			wantCode(t, err, carryon.ENOTFOUND)
		}
		getSession(t, st, ownerA, s.ID) // still there
		write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, s.ID) })
		read(t, st, func(tx store.Tx) error {
			_, err := tx.GetSession(ctx, ownerA, s.ID)
			wantCode(t, err, carryon.ENOTFOUND)
			for i, r := range ids {
				_, err := tx.GetIdempotency(ctx, r.OwnerID, r.Key)
				if i < 2 {
					if carryon.ErrorCode(err) != carryon.ENOTFOUND {
						t.Fatalf("request id %s of the deleted session survived: %v", r.Key, err)
					}
				} else if err != nil {
					t.Fatalf("request id %s of %s (session %q) was deleted with another session: %v", r.Key, r.OwnerID, r.SessionID, err)
				}
			}
			return nil
		})
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, s.ID) })
		wantCode(t, err, carryon.ENOTFOUND)

		// A new session with the same id starts empty: nothing of the old one is left behind.
		reborn := newSession(ownerA, s.ID, at(50))
		insertSession(t, st, reborn)
		read(t, st, func(tx store.Tx) error {
			msgs, err := tx.LastMessages(ctx, ownerA, reborn, 10)
			if err != nil || len(msgs) != 0 {
				t.Fatalf("messages of a deleted session survived: %v, %v", contents(msgs), err)
			}
			doc, mv, err := tx.GetWorkingMemory(ctx, ownerA, s.ID)
			if err != nil || len(doc) != 0 || mv != 0 {
				t.Fatalf("working memory of a deleted session survived: %v %d %v", doc, mv, err)
			}
			revs, err := tx.ListWorkingMemoryRevisions(ctx, ownerA, s.ID, 0, 10)
			if err != nil || len(revs) != 0 {
				t.Fatalf("memory revisions of a deleted session survived: %d, %v", len(revs), err)
			}
			msgs, err = tx.LastMessages(ctx, ownerA, other, 10)
			if err != nil || !reflect.DeepEqual(contents(msgs), []string{"keep"}) {
				t.Fatalf("other session's messages = %v, %v; want [keep]", contents(msgs), err)
			}
			return nil
		})
	})

	// Expired sessions are purgeable by ExpiresAt; closed ones never by ExpiresAt (closing keeps
	// history), only by UpdatedAt (when they were closed) and only when ClosedBefore is set.
	t.Run("Purgeable", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		mk := func(owner, id string, updated, expires time.Time, status carryon.SessionStatus) {
			s := newSession(owner, id, at(0))
			s.UpdatedAt, s.ExpiresAt, s.Status = updated, expires, status
			insertSession(t, st, s)
		}
		mk(ownerA, "sess_old_a", at(1), at(10), carryon.SessionExpired)
		mk(ownerB, "sess_old_b", at(2), at(20), carryon.SessionActive)
		mk(ownerA, "sess_old_closed", at(3), at(30), carryon.SessionClosed)
		mk(ownerB, "sess_closed_late", at(100), at(5), carryon.SessionClosed) // closed after ClosedBefore
		mk(ownerA, "sess_edge", at(4), at(40), carryon.SessionActive)         // not before ExpiredBefore
		mk(ownerB, "sess_new", at(5), at(50), carryon.SessionActive)
		purgeable := func(q store.PurgeQuery) []string {
			t.Helper()
			var refs []store.SessionRef
			read(t, st, func(tx store.Tx) error {
				var err error
				refs, err = tx.PurgeableSessions(ctx, q)
				return err
			})
			var ids []string
			for _, r := range refs {
				getSession(t, st, r.OwnerID, r.ID) // the ref names the session's owner
				ids = append(ids, r.ID)
			}
			return ids
		}
		for _, c := range []struct {
			q    store.PurgeQuery
			want []string
		}{
			{store.PurgeQuery{ExpiredBefore: at(40), Limit: 100}, []string{"sess_old_a", "sess_old_b"}},
			{store.PurgeQuery{ExpiredBefore: at(40)}, []string{"sess_old_a", "sess_old_b"}},
			{store.PurgeQuery{ExpiredBefore: at(40), ClosedBefore: at(50), Limit: 100}, []string{"sess_old_closed", "sess_old_a", "sess_old_b"}},
			{store.PurgeQuery{ExpiredBefore: at(40), ClosedBefore: at(50), Limit: 2}, []string{"sess_old_closed", "sess_old_a"}},
			{store.PurgeQuery{ExpiredBefore: at(0), ClosedBefore: at(3), Limit: 100}, nil},
			{store.PurgeQuery{ExpiredBefore: at(11), ClosedBefore: at(101), Limit: 100}, []string{"sess_old_closed", "sess_old_a", "sess_closed_late"}},
		} {
			if got := purgeable(c.q); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("PurgeableSessions(%+v) = %v, want %v", c.q, got, c.want)
			}
		}
	})
}

func sessionIDs(ss []*carryon.Session) []string {
	out := []string{}
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}
