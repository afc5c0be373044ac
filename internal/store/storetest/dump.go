package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// RunCopy is the conformance case of a copy between stores (carryon copy): it fills a store
// opened by from (a store.Dumper) with every kind of row, loads its dump into an empty store
// opened by to (a store.Loader), and checks that every table has the same number of rows on
// both sides and that everything reads back the same through store.Tx: users and keys, sessions
// and forks with their messages, tombstones, working memory and its history, runs with their
// journals and events, request ids, long-term items with versions and vectors, budgets and
// spend, limits, schedules, webhooks and their deliveries, summaries, and both searches.
func RunCopy(t *testing.T, from, to func(t *testing.T) store.Store) {
	src, dst := from(t), to(t)
	d, ok := src.(store.Dumper)
	if !ok {
		t.Fatalf("%T is not a store.Dumper", src)
	}
	l, ok := dst.(store.Loader)
	if !ok {
		t.Fatalf("%T is not a store.Loader", dst)
	}
	fillAll(t, src)
	ctx := t.Context()
	err := d.Dump(ctx, func(snap store.Snapshot) error {
		return l.Load(ctx, func(load store.LoadTx) error { return loadAll(ctx, snap, load) })
	})
	if err != nil {
		t.Fatalf("copy: %v", err)
	}
	want, got := readAll(t, src), readAll(t, dst)
	for k, w := range want {
		if g := got[k]; g != w {
			t.Errorf("%s after the copy:\n got %s\nwant %s", k, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d reads after the copy, want %d", len(got), len(want))
	}
	// The loaded store is empty no more and takes new writes after the copied ones.
	err = l.Load(ctx, func(load store.LoadTx) error {
		if name, err := load.NonEmpty(ctx); err != nil || name == "" {
			return fmt.Errorf("NonEmpty after the copy = %q, %v", name, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s := getSession(t, dst, ownerA, "sess_"+ownerA)
	appendMessages(t, dst, s, "five after the copy")
	wantFound(t, dst, ownerA, "after the copy", s.ID)
}

// loadAll copies every table of snap into load and fails when a count differs.
func loadAll(ctx context.Context, snap store.Snapshot, load store.LoadTx) error {
	if name, err := load.NonEmpty(ctx); err != nil || name != "" {
		return fmt.Errorf("NonEmpty of a new store = %q, %v", name, err)
	}
	tables, warnings, err := load.Plan(snap.Tables())
	if err != nil || len(warnings) > 0 {
		return fmt.Errorf("plan: %v %v", warnings, err)
	}
	for _, tb := range tables {
		var bad []string
		err := snap.Rows(ctx, tb, 3, func(rows [][]any) error {
			if len(rows) > 3 {
				return fmt.Errorf("a batch of %d rows, asked for 3", len(rows))
			}
			for _, row := range rows {
				load.Check(tb, row, func(column string, err error) { bad = append(bad, column+": "+err.Error()) })
			}
			_, err := load.Insert(ctx, tb, rows)
			return err
		})
		if err != nil || len(bad) > 0 {
			return fmt.Errorf("%s: %v %v", tb.Name, bad, err)
		}
	}
	if _, err := load.Finish(ctx); err != nil {
		return err
	}
	empty := 0
	for _, tb := range tables {
		n, err := snap.Count(ctx, tb.Name)
		if err != nil {
			return err
		}
		m, err := load.Count(ctx, tb.Name)
		if err != nil {
			return err
		}
		if n != m {
			return fmt.Errorf("%s: %d rows in the source, %d loaded", tb.Name, n, m)
		}
		if n == 0 {
			empty++
		}
	}
	if len(tables) < 10 || empty > len(tables)/2 {
		return fmt.Errorf("%d tables of %d are empty: the fill misses kinds of rows", empty, len(tables))
	}
	return nil
}

// fillAll gives two users everything populate gives one (with the fork indexed as the hub does), and adds what it does not: a vector,
// budgets and spend, limits, a schedule, webhooks with a delivery, a summary, working memory.
func fillAll(t *testing.T, st store.Store) {
	ctx := t.Context()
	for _, u := range []string{ownerA, ownerB} {
		populate(t, st, u, u)
		// populate's fork is the store's alone; the hub also copies its tombstones and search
		// documents (forkIndexed), which a copy rebuilds.
		f := getSession(t, st, u, "fork_"+u)
		write(t, st, func(tx store.Tx) error {
			if _, err := tx.CopyMessageDeletions(ctx, u, f, f.ForkVersion); err != nil {
				return err
			}
			return tx.IndexFork(ctx, u, f, f.ForkVersion)
		})
	}
	s := getSession(t, st, ownerA, "sess_"+ownerA)
	tokens, usd := int64(5000), 1.25
	rate, runs := 2.5, int64(3)
	write(t, st, func(tx store.Tx) error {
		if _, err := tx.SetLongTermVector(ctx, ownerA, "notes", "a", 1, store.Vector{Model: "m", Values: []float32{0.6, 0.8}}); err != nil {
			return err
		}
		if err := tx.PutSessionBudget(ctx, ownerA, s.ID, &carryon.Budget{Tokens: &tokens, USD: &usd, OnExceed: carryon.BudgetFail}, at(6)); err != nil {
			return err
		}
		if err := tx.PutUserBudget(ctx, ownerA, carryon.UserBudget{Day: &carryon.Budget{Tokens: &tokens}}, at(6)); err != nil {
			return err
		}
		if err := tx.RecordSpend(ctx, ownerA, s.ID, carryon.ModelCall{Model: "m1", InputTokens: 100, OutputTokens: 10, Cost: 1500}, at(6)); err != nil {
			return err
		}
		if err := tx.PutUserLimits(ctx, ownerA, carryon.Limits{RequestsPerSecond: &rate, MaxRuns: &runs}, at(6)); err != nil {
			return err
		}
		if err := tx.InsertSchedule(ctx, newSchedule(s, "sch_a", 6, at(100))); err != nil {
			return err
		}
		if err := tx.InsertWebhook(ctx, &store.Webhook{ID: "wh_a", OwnerID: ownerA, SessionID: s.ID, URL: "https://example.com/a",
			Events: []string{"run.completed"}, Secret: "whsec_a", CreatedAt: at(6), UpdatedAt: at(6)}); err != nil {
			return err
		}
		_, err := tx.EnqueueWebhookEvent(ctx, store.WebhookEvent{OwnerID: ownerA, SessionID: s.ID, Type: "run.completed", ID: "evt_a",
			Payload: []byte(`{"type":"run.completed"}`), At: at(7)})
		return err
	})
	appendSummary(t, st, s, "alice talked about fruit", 2, `{"by":"test"}`)
}

// readAll reads back, as JSON by name, everything fillAll wrote.
func readAll(t *testing.T, st store.Store) map[string]string {
	ctx := t.Context()
	out := map[string]string{}
	put := func(name string, v any, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		b, err := json.Marshal(v)
		out[name] = string(b)
		return err
	}
	read(t, st, func(tx store.Tx) error {
		for _, u := range []string{ownerA, ownerB} {
			user, err := tx.GetUser(ctx, u)
			if err := put(u+" user", user, err); err != nil {
				return err
			}
			keys, err := tx.ListKeys(ctx, u)
			if err := put(u+" keys", keys, err); err != nil {
				return err
			}
			for _, id := range []string{"sess_" + u, "fork_" + u} {
				s, err := tx.GetSession(ctx, u, id)
				if err := put(id, s, err); err != nil {
					return err
				}
				msgs, err := tx.LastMessages(ctx, u, s, 100)
				if err := put(id+" messages", msgs, err); err != nil {
					return err
				}
				wm, v, err := tx.GetWorkingMemory(ctx, u, id)
				if err := put(id+" working memory", []any{wm, v}, err); err != nil {
					return err
				}
				revs, err := tx.ListWorkingMemoryRevisions(ctx, u, id, 0, 100)
				if err := put(id+" memory history", revs, err); err != nil {
					return err
				}
				rs, err := tx.ListRuns(ctx, u, id, store.RunQuery{})
				if err := put(id+" runs", rs, err); err != nil {
					return err
				}
			}
			run, err := tx.GetRun(ctx, u, "run_"+u)
			if err := put(u+" run", run, err); err != nil {
				return err
			}
			acts, err := tx.ListActions(ctx, u, "run_"+u)
			if err := put(u+" actions", acts, err); err != nil {
				return err
			}
			evs, err := tx.EventsAfter(ctx, u, "run_"+u, 0, 0)
			if err := put(u+" events", evs, err); err != nil {
				return err
			}
			idem, err := tx.GetIdempotency(ctx, u, "req_0")
			if err := put(u+" request id", idem, err); err != nil {
				return err
			}
			items, err := tx.ListLongTermItems(ctx, u, store.LongTermQuery{})
			if err := put(u+" long-term", items, err); err != nil {
				return err
			}
			found, err := tx.SearchLongTermItems(ctx, u, store.LongTermSearchQuery{Text: "apples", Now: at(0), Limit: 10})
			for _, it := range found { // each driver ranks by its own measure
				it.Score = 0
			}
			if err := put(u+" long-term search", found, err); err != nil {
				return err
			}
			gen, vecs, err := tx.LongTermVectors(ctx, u, "m")
			if err := put(u+" vectors", []any{gen, vecs}, err); err != nil {
				return err
			}
			vers, err := tx.ListLongTermVersions(ctx, u, "notes", "a")
			if err := put(u+" long-term versions", vers, err); err != nil {
				return err
			}
			ub, err := tx.UserBudget(ctx, u)
			if err := put(u+" budget", ub, err); err != nil {
				return err
			}
			spend, err := tx.UserSpend(ctx, u, carryon.Day(at(6)))
			if err := put(u+" spend", spend, err); err != nil {
				return err
			}
			lim, when, found2, err := tx.UserLimits(ctx, u)
			if err := put(u+" limits", []any{lim, when, found2}, err); err != nil {
				return err
			}
			scs, err := tx.ListSchedules(ctx, u, store.ScheduleQuery{})
			if err := put(u+" schedules", scs, err); err != nil {
				return err
			}
			whs, err := tx.ListWebhooks(ctx, u)
			if err := put(u+" webhooks", whs, err); err != nil {
				return err
			}
		}
		sb, err := tx.SessionBudget(ctx, ownerA, "sess_"+ownerA)
		return put("session budget", sb, err)
	})
	for _, u := range []string{ownerA, ownerB} {
		for _, q := range []string{"one", "two", "four", "usr_a", "usr_b"} {
			out[u+" search "+q] = fmt.Sprint(search(t, st, u, terms(q)))
		}
	}
	if s := out["sess_"+ownerA+" messages"]; len(s) < 10 {
		t.Fatalf("no messages read: %s", s)
	}
	return out
}
