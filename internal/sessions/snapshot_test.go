package sessions_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// TestContextSnapshot: one read returns the session's view, and the owner's long-term items most
// relevant to the query made from that view (scores relative to the best), never another user's.
func TestContextSnapshot(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.create(t, f.alice)
	f.append(t, f.alice, s.ID, "first")
	f.append(t, f.alice, s.ID, "which editor do I use?")
	put := func(owner, key, text string) {
		t.Helper()
		now := f.clock.Now()
		it := &carryon.LongTermItem{Namespace: "prefs", Key: key, Value: json.RawMessage(`true`), Text: text, CreatedAt: now, UpdatedAt: now}
		if err := f.st.Write(t.Context(), func(_ context.Context, tx store.Tx) error { return tx.PutLongTermItem(t.Context(), owner, it) }); err != nil {
			t.Fatal(err)
		}
	}
	put("usr_alice", "editor", "alice uses the helix editor")
	put("usr_alice", "tea", "alice drinks green tea")
	put("usr_bob", "editor", "bob uses the vim editor")

	var asked *carryon.SessionView
	snap, err := f.svc.ContextSnapshot(f.alice, s.ID, carryon.ContextSnapshotRequest{
		Messages: 1, Actions: 3, LongTermItems: 5,
		LongTermQuery: func(v *carryon.SessionView) string { asked = v; return v.Messages[len(v.Messages)-1].Content },
	})
	if err != nil {
		t.Fatal(err)
	}
	if snap.View.ID != s.ID || len(snap.View.Messages) != 1 || snap.View.Messages[0].Content != "which editor do I use?" {
		t.Fatalf("view = %+v", snap.View)
	}
	if asked != snap.View {
		t.Errorf("the query was made from another view than the snapshot's")
	}
	if len(snap.Actions) != 0 {
		t.Errorf("actions of a session without runs = %v", snap.Actions)
	}
	if len(snap.LongTerm) == 0 || snap.LongTerm[0].Key != "editor" || snap.LongTerm[0].Score != 1 {
		t.Fatalf("long-term = %+v; want alice's editor first with score 1", snap.LongTerm)
	}
	for _, it := range snap.LongTerm {
		if it.OwnerID != "usr_alice" {
			t.Errorf("snapshot holds %s's item %s", it.OwnerID, it.Key)
		}
	}

	none, err := f.svc.ContextSnapshot(f.alice, s.ID, carryon.ContextSnapshotRequest{Messages: 5})
	if err != nil || len(none.LongTerm) != 0 || len(none.View.Messages) != 2 {
		t.Fatalf("snapshot without long-term items = %+v, %v", none, err)
	}
	for _, bad := range []carryon.ContextSnapshotRequest{{Messages: 0}, {Messages: carryon.MaxMessageWindow + 1}, {Messages: 1, Actions: -1}, {Messages: 1, LongTermItems: -1}, {Messages: 1, LongTermItems: carryon.MaxLongTermSearchLimit + 1}} {
		if _, err := f.svc.ContextSnapshot(f.alice, s.ID, bad); carryon.ErrorCode(err) != carryon.EINVALID {
			t.Errorf("ContextSnapshot(%+v) = %v; want EINVALID", bad, err)
		}
	}
}
