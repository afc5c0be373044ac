package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

func testWorkingMemory(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	ctx := t.Context()
	s := newSession(ownerA, "sess_1", at(0))
	insertSession(t, st, s)

	read(t, st, func(tx store.Tx) error {
		doc, mv, err := tx.GetWorkingMemory(ctx, ownerA, s.ID)
		if err != nil || len(doc) != 0 || mv != 0 {
			t.Fatalf("GetWorkingMemory before any write = %v, %d, %v; want empty, 0", doc, mv, err)
		}
		return nil
	})

	revs := []*carryon.WorkingMemoryRevision{
		{SessionID: s.ID, WorkingMemoryVersion: 1, Version: 2, Patch: json.RawMessage(`{"goal":"ship it"}`),
			Document: carryon.WorkingMemory{"goal": "ship it"}, RunID: "run_1", CreatedAt: at(1)},
		{SessionID: s.ID, WorkingMemoryVersion: 2, Version: 4, Patch: json.RawMessage(`{"plan":[{"title":"write","status":"doing"}]}`),
			Document:  carryon.WorkingMemory{"goal": "ship it", "plan": []any{map[string]any{"title": "write", "status": "doing"}}},
			CreatedAt: at(2)},
		{SessionID: s.ID, WorkingMemoryVersion: 3, Version: 5, Patch: json.RawMessage(`{"goal":null,"next_action":"test"}`),
			Document:  carryon.WorkingMemory{"next_action": "test", "plan": []any{map[string]any{"title": "write", "status": "doing"}}},
			CreatedAt: at(3)},
	}
	for _, r := range revs {
		write(t, st, func(tx store.Tx) error { return tx.InsertWorkingMemoryRevision(ctx, ownerA, r) })
	}

	t.Run("Current", func(t *testing.T) {
		read(t, st, func(tx store.Tx) error {
			doc, mv, err := tx.GetWorkingMemory(ctx, ownerA, s.ID)
			if err != nil || mv != 3 || !docEqual(doc, revs[2].Document) {
				t.Fatalf("GetWorkingMemory = %v, %d, %v; want %v, 3", doc, mv, err, revs[2].Document)
			}
			return nil
		})
	})

	t.Run("Revisions", func(t *testing.T) {
		read(t, st, func(tx store.Tx) error {
			for _, want := range revs {
				got, err := tx.GetWorkingMemoryRevision(ctx, ownerA, s.ID, want.WorkingMemoryVersion)
				if err != nil {
					t.Fatalf("GetWorkingMemoryRevision(%d): %v", want.WorkingMemoryVersion, err)
				}
				checkRevision(t, got, want)
			}
			_, err := tx.GetWorkingMemoryRevision(ctx, ownerA, s.ID, 9)
			wantCode(t, err, carryon.ENOTFOUND)

			for v, want := range map[int64]int64{1: 0, 2: 1, 3: 1, 4: 2, 5: 3, 99: 3} {
				got, err := tx.WorkingMemoryAtVersion(ctx, ownerA, s.ID, v)
				if err != nil {
					t.Fatalf("WorkingMemoryAtVersion(%d): %v", v, err)
				}
				if (got == nil) != (want == 0) || (got != nil && got.WorkingMemoryVersion != want) {
					t.Fatalf("WorkingMemoryAtVersion(%d) = %+v, want memory version %d", v, got, want)
				}
			}

			list := func(before int64, limit int) []int64 {
				got, err := tx.ListWorkingMemoryRevisions(ctx, ownerA, s.ID, before, limit)
				if err != nil {
					t.Fatalf("ListWorkingMemoryRevisions(%d, %d): %v", before, limit, err)
				}
				out := []int64{}
				for _, r := range got {
					out = append(out, r.WorkingMemoryVersion)
				}
				return out
			}
			checkSeqs(t, "ListWorkingMemoryRevisions(0, 10)", list(0, 10), 3, 2, 1)
			checkSeqs(t, "ListWorkingMemoryRevisions(0, 2)", list(0, 2), 3, 2)
			checkSeqs(t, "ListWorkingMemoryRevisions(3, 1)", list(3, 1), 2)
			checkSeqs(t, "ListWorkingMemoryRevisions(1, 10)", list(1, 10))
			return nil
		})
	})

	t.Run("DuplicateVersion", func(t *testing.T) {
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.InsertWorkingMemoryRevision(ctx, ownerA, &carryon.WorkingMemoryRevision{
				SessionID: s.ID, WorkingMemoryVersion: 2, Version: 9, Document: carryon.WorkingMemory{"goal": "overwrite"}, CreatedAt: at(9),
			})
		})
		wantCode(t, err, carryon.ECONFLICT)
		read(t, st, func(tx store.Tx) error {
			doc, mv, err := tx.GetWorkingMemory(ctx, ownerA, s.ID)
			if err != nil || mv != 3 || !docEqual(doc, revs[2].Document) {
				t.Fatalf("a refused revision changed the document: %v, %d, %v", doc, mv, err)
			}
			return nil
		})
	})

	t.Run("Ownership", func(t *testing.T) {
		for _, c := range []struct{ owner, id string }{{ownerB, s.ID}, {ownerA, "sess_missing"}} {
			read(t, st, func(tx store.Tx) error {
				_, _, err := tx.GetWorkingMemory(ctx, c.owner, c.id)
				wantCode(t, err, carryon.ENOTFOUND)
				_, err = tx.GetWorkingMemoryRevision(ctx, c.owner, c.id, 1)
				wantCode(t, err, carryon.ENOTFOUND)
				_, err = tx.WorkingMemoryAtVersion(ctx, c.owner, c.id, 99)
				wantCode(t, err, carryon.ENOTFOUND)
				_, err = tx.ListWorkingMemoryRevisions(ctx, c.owner, c.id, 0, 10)
				wantCode(t, err, carryon.ENOTFOUND)
				return nil
			})
			err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				return tx.InsertWorkingMemoryRevision(ctx, c.owner, &carryon.WorkingMemoryRevision{
					SessionID: c.id, WorkingMemoryVersion: 4, Version: 6, Document: carryon.WorkingMemory{"goal": "stolen"}, CreatedAt: at(6),
				})
			})
			wantCode(t, err, carryon.ENOTFOUND)
		}
		read(t, st, func(tx store.Tx) error {
			if _, mv, err := tx.GetWorkingMemory(ctx, ownerA, s.ID); err != nil || mv != 3 {
				t.Fatalf("a foreign write changed the memory version: %d, %v", mv, err)
			}
			return nil
		})
	})
}

// testWorkingMemoryHistory stores a long history of revisions (drivers may keep patches with
// periodic snapshots): every revision reads back with its own document, by version, by list and
// by session version, including revisions whose patch does not produce their document and
// documents with numbers that float64 cannot hold.
func testWorkingMemoryHistory(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	ctx := t.Context()
	s := newSession(ownerA, "sess_hist", at(0))
	insertSession(t, st, s)
	doc := map[string]any{}
	var revs []*carryon.WorkingMemoryRevision
	for mv := int64(1); mv <= 45; mv++ {
		patch := map[string]any{"next_action": fmt.Sprintf("step %d", mv), "big": json.Number("12345678901234567891")}
		if mv%5 == 0 {
			patch["goal"] = nil
		} else if mv%5 == 1 {
			patch["goal"] = map[string]any{"title": "ship", "round": mv}
		}
		raw, _ := json.Marshal(patch)
		for k, v := range patch {
			if v == nil {
				delete(doc, k)
			} else {
				doc[k] = v
			}
		}
		if mv == 23 {
			doc["set_by_hand"] = true // this revision's patch does not produce its document
		}
		cp := carryon.WorkingMemory{}
		b, _ := json.Marshal(doc)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&cp); err != nil {
			t.Fatal(err)
		}
		r := &carryon.WorkingMemoryRevision{SessionID: s.ID, WorkingMemoryVersion: mv, Version: 2 * mv, Patch: raw,
			Document: cp, CreatedAt: at(int(mv))}
		write(t, st, func(tx store.Tx) error { return tx.InsertWorkingMemoryRevision(ctx, ownerA, r) })
		revs = append(revs, r)
	}
	read(t, st, func(tx store.Tx) error {
		for _, want := range revs {
			got, err := tx.GetWorkingMemoryRevision(ctx, ownerA, s.ID, want.WorkingMemoryVersion)
			if err != nil {
				t.Fatalf("GetWorkingMemoryRevision(%d): %v", want.WorkingMemoryVersion, err)
			}
			checkRevision(t, got, want)
			at, err := tx.WorkingMemoryAtVersion(ctx, ownerA, s.ID, want.Version+1)
			if err != nil {
				t.Fatalf("WorkingMemoryAtVersion(%d): %v", want.Version+1, err)
			}
			checkRevision(t, at, want)
		}
		for _, page := range []struct {
			before int64
			limit  int
		}{{0, 0}, {0, 7}, {40, 20}, {17, 3}, {3, 10}} {
			got, err := tx.ListWorkingMemoryRevisions(ctx, ownerA, s.ID, page.before, page.limit)
			if err != nil {
				t.Fatalf("ListWorkingMemoryRevisions(%d, %d): %v", page.before, page.limit, err)
			}
			for _, r := range got {
				checkRevision(t, r, revs[r.WorkingMemoryVersion-1])
			}
		}
		return nil
	})
}

func checkRevision(t testing.TB, got, want *carryon.WorkingMemoryRevision) {
	t.Helper()
	if got.SessionID != want.SessionID || got.WorkingMemoryVersion != want.WorkingMemoryVersion || got.Version != want.Version ||
		got.RunID != want.RunID || !got.CreatedAt.Equal(want.CreatedAt) || !jsonEqual(got.Patch, want.Patch) ||
		!docEqual(got.Document, want.Document) {
		t.Fatalf("revision = %+v, want %+v", got, want)
	}
}
