package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// populate gives the user id (named name) everything a user can own: two keys; a session with
// four messages (one with run and request ids), a tombstone, two working memory revisions, a run with two actions and three
// events and a request id of the session; a fork of it with a message of its own; two long-term
// items; a request id of no session. It returns what a forget of the user must count.
func populate(t *testing.T, st store.Store, id, name string) carryon.ForgetCounts {
	t.Helper()
	ctx := t.Context()
	write(t, st, func(tx store.Tx) error {
		if err := tx.InsertUser(ctx, &carryon.User{ID: id, Name: name, CreatedAt: at(0)}); err != nil {
			return err
		}
		for i := range 2 {
			k := &carryon.APIKey{ID: fmt.Sprintf("key_%s_%d", id, i), UserID: id, Prefix: "ck_abc",
				Hash: fmt.Sprintf("hash_%s_%d", id, i), CreatedAt: at(0)}
			if err := tx.InsertKey(ctx, k); err != nil {
				return err
			}
		}
		return nil
	})
	s := newSession(id, "sess_"+id, at(1))
	insertSession(t, st, s)
	appendMessages(t, st, s, "one "+name, "two "+name, "three "+name)
	appendWrite(t, st, s, "req_msg_"+id, "run_msg_"+id, 1) // with the ids its write stored
	deleteMessage(t, st, s, 2)
	write(t, st, func(tx store.Tx) error {
		for v := int64(1); v <= 2; v++ {
			r := &carryon.WorkingMemoryRevision{SessionID: s.ID, WorkingMemoryVersion: v, Version: s.Version,
				Patch: json.RawMessage(`{"goal":"g"}`), Document: carryon.WorkingMemory{"goal": name}, CreatedAt: at(2)}
			if err := tx.InsertWorkingMemoryRevision(ctx, id, r); err != nil {
				return err
			}
		}
		run := newRun(s, "run_"+id, carryon.RunRunning, 3)
		if err := tx.InsertRun(ctx, run); err != nil {
			return err
		}
		for i := range 2 {
			if err := tx.InsertAction(ctx, id, newAction(run.ID, s.ID, 1, i, 4)); err != nil {
				return err
			}
		}
		for range 3 {
			if err := tx.AppendEvent(ctx, id, &carryon.Event{RunID: run.ID, Type: carryon.EventRunStarted, CreatedAt: at(5)}); err != nil {
				return err
			}
		}
		for i, sess := range []string{s.ID, ""} {
			r := &store.IdempotencyRecord{OwnerID: id, Key: fmt.Sprintf("req_%d", i), SessionID: sess, Fingerprint: "f",
				State: store.IdemDone, Result: []byte(`{}`), CreatedAt: at(5), ExpiresAt: at(9999)}
			if err := tx.PutIdempotency(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	f := fork(t, st, s, "fork_"+id, 3, s.Version)
	appendMessages(t, st, f, "four "+name)
	m := longTermStore{t, st}
	m.put(id, "notes", "a", `"x"`, "apples "+name, nil)
	m.put(id, "notes", "b", `"y"`, "pears "+name, nil)
	return carryon.ForgetCounts{Sessions: 2, Messages: 5, MessageDeletions: 1, MemoryRevisions: 2, Runs: 1, Actions: 2,
		Events: 3, LongTermItems: 2, RequestIDs: 2, Keys: 2}
}

// forget erases the user with the store's steps as the hub service takes them, at most limit
// rows a step, and returns the receipt and how many steps deleted rows.
func forget(t *testing.T, st store.Store, id string, limit int) (*carryon.ForgetReceipt, int) {
	t.Helper()
	ctx := t.Context()
	steps := 0
	for {
		var ids []string
		read(t, st, func(tx store.Tx) (err error) { ids, err = tx.ForgetSessions(ctx, id, 1); return err })
		if len(ids) == 0 {
			break
		}
		for done := false; !done; steps++ {
			write(t, st, func(tx store.Tx) error {
				c, err := tx.ForgetSessionRows(ctx, id, ids[0], limit)
				if err != nil {
					return err
				}
				if c.Total() > int64(limit) {
					t.Fatalf("a step with limit %d deleted %d rows", limit, c.Total())
				}
				if done = c.Total() == 0; done {
					if err := tx.DeleteSession(ctx, id, ids[0]); err != nil {
						return err
					}
					c.Sessions = 1
				}
				return tx.AddForgotten(ctx, id, c)
			})
		}
	}
	for done := false; !done; steps++ {
		write(t, st, func(tx store.Tx) error {
			c, err := tx.ForgetUserRows(ctx, id, limit)
			done = err == nil && c.Total() == 0
			if err == nil {
				err = tx.AddForgotten(ctx, id, c)
			}
			return err
		})
	}
	var r *carryon.ForgetReceipt
	write(t, st, func(tx store.Tx) (err error) { r, err = tx.DeleteForgottenUser(ctx, id); return err })
	return r, steps
}

func testForget(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("EverythingOfOneUser", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		want := populate(t, st, ownerA, "alice")
		populate(t, st, ownerB, "bob")
		var before []store.UserStat
		read(t, st, func(tx store.Tx) (err error) { before, err = tx.UserStats(ctx); return err })

		write(t, st, func(tx store.Tx) error {
			n, err := tx.MarkForgetting(ctx, ownerA, at(10))
			if err == nil && n != 2 {
				t.Fatalf("MarkForgetting deleted %d keys, want 2", n)
			}
			return err
		})
		write(t, st, func(tx store.Tx) error {
			_, err := tx.MarkForgetting(ctx, ownerA, at(11))
			wantCode(t, err, carryon.ENOTFOUND) // once
			return nil
		})
		read(t, st, func(tx store.Tx) error {
			for _, name := range []string{ownerA, "alice"} {
				_, err := tx.GetUser(ctx, name)
				wantCode(t, err, carryon.ENOTFOUND)
			}
			_, _, err := tx.KeyByHash(ctx, "hash_"+ownerA+"_0")
			wantCode(t, err, carryon.ENOTFOUND)
			users, err := tx.ListUsers(ctx)
			if err != nil || len(users) != 1 || users[0].ID != ownerB {
				t.Fatalf("ListUsers while forgetting = %v, %v; want bob only", users, err)
			}
			ids, err := tx.ForgettingUsers(ctx)
			if err != nil || !slices.Equal(ids, []string{ownerA}) {
				t.Fatalf("ForgettingUsers = %v, %v", ids, err)
			}
			return nil
		})

		r, steps := forget(t, st, ownerA, 2)
		if r.Deleted != want || r.UserID != ownerA || !r.StartedAt.Equal(at(10)) {
			t.Fatalf("receipt = %+v, want deleted %+v from %v", r, want, at(10))
		}
		if steps < int(want.Total()/2) {
			t.Fatalf("%d steps of at most 2 rows deleted %d rows", steps, want.Total())
		}
		read(t, st, func(tx store.Tx) error {
			for _, s := range []string{"sess_" + ownerA, "fork_" + ownerA} {
				_, err := tx.GetSession(ctx, ownerA, s)
				wantCode(t, err, carryon.ENOTFOUND)
			}
			_, err := tx.GetRun(ctx, ownerA, "run_"+ownerA)
			wantCode(t, err, carryon.ENOTFOUND)
			_, err = tx.GetIdempotency(ctx, ownerA, "req_1")
			wantCode(t, err, carryon.ENOTFOUND)
			_, err = tx.Forgetting(ctx, ownerA)
			wantCode(t, err, carryon.ENOTFOUND)
			items, err := tx.ListLongTermItems(ctx, ownerA, store.LongTermQuery{Now: at(0)})
			if err != nil || len(items) != 0 {
				t.Fatalf("long-term items after forgetting: %v, %v", items, err)
			}
			found, err := tx.SearchLongTermItems(ctx, ownerA, store.LongTermSearchQuery{Text: "apples", Now: at(0), Limit: 10})
			if err != nil || len(found) != 0 {
				t.Fatalf("search after forgetting: %v, %v", found, err)
			}
			ids, err := tx.ForgettingUsers(ctx)
			if err != nil || len(ids) != 0 {
				t.Fatalf("ForgettingUsers after = %v, %v", ids, err)
			}
			after, err := tx.UserStats(ctx)
			if err != nil || len(after) != 1 || after[0] != before[1] {
				t.Fatalf("bob's rows before %+v, after %+v (%v)", before, after, err)
			}
			found, err = tx.SearchLongTermItems(ctx, ownerB, store.LongTermSearchQuery{Text: "apples", Now: at(0), Limit: 10})
			if err != nil || len(found) != 1 {
				t.Fatalf("bob's search after forgetting alice: %v, %v", found, err)
			}
			return nil
		})
	})

	t.Run("OnlyWhileMarked", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		populate(t, st, ownerA, "alice")
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			_, err := tx.DeleteForgottenUser(ctx, ownerA)
			return err
		})
		wantCode(t, err, carryon.ENOTFOUND)
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.AddForgotten(ctx, ownerA, carryon.ForgetCounts{Keys: 1})
		})
		wantCode(t, err, carryon.ENOTFOUND)
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			_, err := tx.ForgetSessionRows(ctx, ownerB, "sess_"+ownerA, 10)
			return err
		})
		wantCode(t, err, carryon.ENOTFOUND) // another owner's session
		read(t, st, func(tx store.Tx) error {
			ids, err := tx.ForgetSessions(ctx, ownerA, 0)
			if err != nil || !slices.Equal(ids, []string{"fork_" + ownerA}) {
				t.Fatalf("ForgetSessions = %v, %v; want the fork only (its parent has a fork)", ids, err)
			}
			return nil
		})
	})
}
