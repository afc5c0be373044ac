package sessions_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon"
)

// TestCreateWithExternalID: an external id names one session per owner. A repeat answers that
// session unchanged (and says so in the receipt), if_exists error refuses it, another owner gets a
// session of its own, and List finds the session by it.
func TestCreateWithExternalID(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	first, err := f.svc.Create(f.alice, carryon.NewSession{Title: "first", ExternalID: "adk-42"})
	if err != nil {
		t.Fatal(err)
	}
	if first.ExternalID != "adk-42" {
		t.Fatalf("ExternalID = %q, want adk-42", first.ExternalID)
	}
	rec := &carryon.WriteReceipt{}
	again, err := f.svc.Create(carryon.NewContextWithReceipt(f.alice, rec), carryon.NewSession{Title: "other title", ExternalID: "adk-42"})
	if err != nil || again.ID != first.ID || again.Title != "first" || again.Version != first.Version || !rec.Existing {
		t.Fatalf("repeat = %+v, %v (existing %v); want the first session unchanged", again, err, rec.Existing)
	}
	rec = &carryon.WriteReceipt{}
	fresh, err := f.svc.Create(carryon.NewContextWithReceipt(f.alice, rec), carryon.NewSession{ExternalID: "adk-43"})
	if err != nil || rec.Existing || fresh.ID == first.ID {
		t.Fatalf("a new external id = %+v, %v (existing %v); want a new session", fresh, err, rec.Existing)
	}
	_, err = f.svc.Create(f.alice, carryon.NewSession{ExternalID: "adk-42", IfExists: carryon.IfExistsError})
	if carryon.ErrorCode(err) != carryon.ECONFLICT || !strings.Contains(err.Error(), first.ID) {
		t.Fatalf("if_exists error = %v; want ECONFLICT naming %s", err, first.ID)
	}
	bobs, err := f.svc.Create(f.bob, carryon.NewSession{ExternalID: "adk-42"})
	if err != nil || bobs.ID == first.ID || bobs.OwnerID == first.OwnerID {
		t.Fatalf("bob's create = %+v, %v; want a session of his own", bobs, err)
	}
	page, err := f.svc.List(f.alice, carryon.SessionFilter{ExternalID: "adk-42"})
	if err != nil || len(page.Items) != 1 || page.Items[0].ID != first.ID {
		t.Fatalf("List(external adk-42) = %+v, %v; want the first session", page, err)
	}
	page, err = f.svc.List(f.bob, carryon.SessionFilter{ExternalID: "adk-43"})
	if err != nil || len(page.Items) != 0 {
		t.Fatalf("bob's List(external adk-43) = %+v, %v; want nothing (alice's session)", page, err)
	}
	all, err := f.svc.List(f.alice, carryon.SessionFilter{})
	if err != nil || len(all.Items) != 2 {
		t.Fatalf("alice has %d sessions (%v); want 2: a repeat makes none", len(all.Items), err)
	}
}

// TestCreateWithExternalIDConcurrently: creates racing with one external id make one session and
// all answer it.
func TestCreateWithExternalIDConcurrently(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const n = 8
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := f.svc.Create(f.alice, carryon.NewSession{ExternalID: "race"})
			errs[i] = err
			if s != nil {
				ids[i] = s.ID
			}
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Fatalf("create %d = %s, %v; want %s", i, ids[i], errs[i], ids[0])
		}
	}
}

// TestExternalIDValidation: bad external ids and if_exists values are refused, and nothing is stored.
func TestExternalIDValidation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for name, in := range map[string]carryon.NewSession{
		"too long":          {ExternalID: strings.Repeat("x", carryon.MaxExternalIDLen+1)},
		"unprintable":       {ExternalID: "a\tb"},
		"NUL":               {ExternalID: "a\x00b"},
		"unknown if_exists": {ExternalID: "a", IfExists: "replace"},
		"if_exists alone":   {IfExists: carryon.IfExistsError},
	} {
		if _, err := f.svc.Create(f.alice, in); carryon.ErrorCode(err) != carryon.EINVALID {
			t.Errorf("%s: %v; want EINVALID", name, err)
		}
	}
	if _, err := f.svc.List(f.alice, carryon.SessionFilter{ExternalID: "a\nb"}); carryon.ErrorCode(err) != carryon.EINVALID {
		t.Errorf("List with an unprintable external id: %v; want EINVALID", err)
	}
	if page, err := f.svc.List(f.alice, carryon.SessionFilter{}); err != nil || len(page.Items) != 0 {
		t.Fatalf("sessions after refused creates: %+v, %v; want none", page, err)
	}
	if _, err := f.svc.Create(f.alice, carryon.NewSession{ExternalID: strings.Repeat("é", carryon.MaxExternalIDLen)}); err != nil {
		t.Fatalf("an external id of exactly the limit: %v", err)
	}
}
