package sessions_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/bundle"
)

// TestExportImportRoundTrip: a session with messages, a deleted one, working-memory revisions
// and a fork exports, imports as a new session of another user and exports again to the same
// bundle apart from ids and times (bundle.Normalize); the fork links to its parent again.
func TestExportImportRoundTrip(t *testing.T) {
	f := newFixture(t)
	s := f.create(t, f.alice)
	f.append(t, f.alice, s.ID, "one", "two", "three")
	if _, err := f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(`{"goal":"g","plan":["a"]}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.DeleteMessage(f.alice, s.ID, 2, carryon.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(`{"plan":null,"next_action":"n"}`)}); err != nil {
		t.Fatal(err)
	}
	first, err := f.svc.Export(f.alice, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(first, []byte(`"two"`)) {
		t.Fatalf("the deleted message's text is in the bundle:\n%s", first)
	}
	if _, err := f.svc.Export(f.bob, s.ID); carryon.ErrorCode(err) != carryon.ENOTFOUND {
		t.Fatalf("bob exports alice's session: %v", err)
	}
	got, err := f.svc.Import(f.bob, carryon.ImportInput{Bundle: first})
	if err != nil {
		t.Fatal(err)
	}
	if got.Session.ID == s.ID || got.Session.OwnerID != "usr_bob" || got.Counts[bundle.KindMessage] != 3 || got.Counts[bundle.KindTombstone] != 1 {
		t.Fatalf("import: %+v", got)
	}
	view, err := f.svc.Get(f.bob, got.Session.ID, carryon.GetOptions{Messages: 10})
	if err != nil || len(view.Messages) != 2 || view.Messages[1].Content != "three" || view.WorkingMemory.NextAction() != "n" {
		t.Fatalf("imported session: %v %+v", err, view)
	}
	second, err := f.svc.Export(f.bob, got.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameBundle(t, first, second)

	// A fork: its bundle references the parent, and imports as a fork of it again.
	fork, err := f.svc.Fork(f.alice, s.ID, carryon.ForkInput{})
	if err != nil {
		t.Fatal(err)
	}
	f.append(t, f.alice, fork.ID, "four")
	fb, err := f.svc.Export(f.alice, fork.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Import(f.bob, carryon.ImportInput{Bundle: fb}); carryon.ErrorCode(err) != carryon.EINVALID {
		t.Fatalf("bob imports a fork of alice's session: %v", err)
	}
	fi, err := f.svc.Import(f.alice, carryon.ImportInput{Bundle: fb})
	if err != nil {
		t.Fatal(err)
	}
	fv, err := f.svc.Get(f.alice, fi.Session.ID, carryon.GetOptions{Messages: 10})
	if err != nil || fv.ParentID != s.ID || len(fv.Messages) != 3 || fv.Messages[0].Content != "one" || fv.Messages[2].Content != "four" {
		t.Fatalf("imported fork: %v %+v", err, fv)
	}
	fb2, err := f.svc.Export(f.alice, fi.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameBundle(t, fb, fb2)
}

// sameBundle fails unless a and b are the same bundle apart from ids and times.
func sameBundle(t *testing.T, a, b []byte) {
	t.Helper()
	na, err := bundle.Normalize(a)
	if err != nil {
		t.Fatal(err)
	}
	nb, err := bundle.Normalize(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(na, nb) {
		t.Fatalf("the bundles differ:\n%s\n---\n%s", na, nb)
	}
}
