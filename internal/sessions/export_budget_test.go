package sessions_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/bundle"
)

// TestExportCarriesBudget: a session's budget goes into its bundle and comes back with the
// import (its spend does not: the copy starts with none); a budget the server would refuse
// refuses the bundle; a bundle of version 1, which had no budget, still imports.
func TestExportCarriesBudget(t *testing.T) {
	f := newFixture(t)
	tokens := int64(5000)
	s, err := f.svc.Create(f.alice, carryon.NewSession{Title: "t", Budget: &carryon.Budget{Tokens: &tokens, OnExceed: carryon.BudgetFail}})
	if err != nil {
		t.Fatal(err)
	}
	f.append(t, f.alice, s.ID, "one")
	data, err := f.svc.Export(f.alice, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"budget":{"tokens":5000,"on_exceed":"fail"}`)) {
		t.Fatalf("the bundle holds no budget:\n%s", data)
	}
	got, err := f.svc.Import(f.bob, carryon.ImportInput{Bundle: data})
	if err != nil {
		t.Fatal(err)
	}
	view, err := f.svc.Get(f.bob, got.Session.ID, carryon.GetOptions{})
	if err != nil || view.Budget == nil || view.Budget.Tokens == nil || *view.Budget.Tokens != 5000 || view.Budget.OnExceed != carryon.BudgetFail {
		t.Fatalf("the imported session's budget: %v %+v", err, view.Budget)
	}
	again, err := f.svc.Export(f.bob, got.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameBundle(t, data, again)

	bad := resealed(t, data, func(lines []string) {
		lines[1] = strings.Replace(lines[1], `"tokens":5000`, `"tokens":-1`, 1)
	})
	if _, err := f.svc.Import(f.bob, carryon.ImportInput{Bundle: bad}); carryon.ErrorCode(err) != carryon.EINVALID || !strings.Contains(carryon.ErrorMessage(err), "session.budget.tokens") {
		t.Fatalf("a negative budget: %v", err)
	}

	plain := f.create(t, f.alice)
	f.append(t, f.alice, plain.ID, "two")
	v2, err := f.svc.Export(f.alice, plain.ID)
	if err != nil {
		t.Fatal(err)
	}
	v1 := resealed(t, v2, func(lines []string) {
		lines[0] = strings.Replace(lines[0], fmt.Sprintf(`"version":%d`, bundle.Version), `"version":1`, 1)
	})
	if bytes.Equal(v1, v2) {
		t.Fatal("the header was not rewritten to version 1")
	}
	old, err := f.svc.Import(f.bob, carryon.ImportInput{Bundle: v1})
	if err != nil {
		t.Fatalf("a version 1 bundle: %v", err)
	}
	if view, err := f.svc.Get(f.bob, old.Session.ID, carryon.GetOptions{Messages: 5}); err != nil || view.Budget != nil || len(view.Messages) != 1 {
		t.Fatalf("the version 1 import: %v %+v", err, view)
	}
}

// resealed is data with edit applied to its lines but the end line and the end line made again
// to match them (the digest and counts), as a bundle written that way would be.
func resealed(t *testing.T, data []byte, edit func(lines []string)) []byte {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	lines = lines[:len(lines)-1]
	edit(lines)
	body := strings.Join(lines, "\n") + "\n"
	var end struct {
		Counts map[string]int64 `json:"counts"`
	}
	last := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if err := json.Unmarshal([]byte(last[len(last)-1]), &end); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(body))
	b, _ := json.Marshal(map[string]any{"kind": "end", "sha256": hex.EncodeToString(sum[:]), "counts": end.Counts})
	return []byte(body + string(b) + "\n")
}
