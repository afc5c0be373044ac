package storetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// appendSummary appends to s, in one write at its next version, a summary covering 1..coversTo
// with meta as its metadata (a compaction), and updates s.
func appendSummary(t testing.TB, st store.Store, s *carryon.Session, text string, coversTo int64, meta string) {
	t.Helper()
	write(t, st, func(tx store.Tx) error {
		cur, err := tx.GetSession(t.Context(), s.OwnerID, s.ID)
		if err != nil {
			return err
		}
		prev := cur.Version
		cur.Version++
		cur.LastSeq++
		cur.MessageCount++
		m := &carryon.Message{SessionID: cur.ID, Seq: cur.LastSeq, Role: carryon.RoleSystem, Kind: carryon.KindSummary,
			Content: text, CoversFrom: 1, CoversTo: coversTo, Metadata: json.RawMessage(meta), RequestID: "req_c",
			Tokens: len(text), Version: cur.Version, CreatedAt: at(int(cur.LastSeq))}
		if err := tx.InsertMessages(t.Context(), s.OwnerID, []*carryon.Message{m}); err != nil {
			return err
		}
		if err := tx.UpdateSession(t.Context(), cur, prev); err != nil {
			return err
		}
		*s = *cur
		return nil
	})
}

// summaries reads Summaries of s as its owner.
func summaries(t testing.TB, st store.Store, owner string, s *carryon.Session) ([]*carryon.Message, error) {
	t.Helper()
	var out []*carryon.Message
	err := st.Read(t.Context(), func(tx store.Tx) error {
		var err error
		out, err = tx.Summaries(t.Context(), owner, s)
		return err
	})
	return out, err
}

func testSummaries(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	p := newSession(ownerA, "sess_sp", at(0))
	insertSession(t, st, p)
	appendMessages(t, st, p, "one", "two", "three")
	before := fork(t, st, p, "sess_sbefore", 3, p.Version)
	meta := `{"compaction":{"model":"m","tokens_before":30,"tokens_after":5}}`
	appendSummary(t, st, p, "the first three", 3, meta)
	appendMessages(t, st, p, "four")
	after := fork(t, st, p, "sess_safter", 5, p.Version)
	appendSummary(t, st, after, "the fork's five", 5, `{}`)

	got, err := summaries(t, st, ownerA, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Seq != 4 || got[0].Content != "the first three" || got[0].CoversTo != 3 ||
		got[0].RequestID != "req_c" || !jsonEqual(got[0].Metadata, []byte(meta)) || got[0].SessionID != p.ID {
		t.Fatalf("summaries of the parent = %+v, want the one at seq 4 with its metadata", got)
	}
	if got, err := summaries(t, st, ownerA, before); err != nil || len(got) != 0 {
		t.Fatalf("a fork made before the summary sees %v (%v), want none", seqs(got), err)
	}
	got, err = summaries(t, st, ownerA, after)
	if err != nil || len(got) != 2 || got[0].Seq != 4 || got[1].Seq != 6 || got[0].SessionID != after.ID {
		t.Fatalf("a fork made after the summary sees %v (%v), want [4 6] labelled with its id", seqs(got), err)
	}
	_, err = summaries(t, st, ownerB, p)
	wantCode(t, err, carryon.ENOTFOUND)

	// Deleting a message the summary covers deletes the summary (the redaction rule).
	write(t, st, func(tx store.Tx) error {
		return tx.DeleteMessage(context.Background(), ownerA, p, 2, p.Version+1, at(60))
	})
	if got, err := summaries(t, st, ownerA, p); err != nil || len(got) != 0 {
		t.Fatalf("after deleting a covered message the parent lists %v (%v), want none", seqs(got), err)
	}
}
