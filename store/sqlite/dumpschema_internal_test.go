package sqlite

import (
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/store"
)

// TestFKOrder: referenced tables first, creation order otherwise, and a cycle is an error.
func TestFKOrder(t *testing.T) {
	t.Parallel()
	tab := func(name string, refs ...string) *dumpTable {
		return &dumpTable{Table: store.Table{Name: name, Refs: refs}}
	}
	got, err := fkOrder([]*dumpTable{tab("b", "a"), tab("c"), tab("a", "c"), tab("d", "b", "a")})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, t := range got {
		names = append(names, t.Name)
	}
	if strings.Join(names, ",") != "c,a,b,d" {
		t.Fatalf("order %v", names)
	}
	if _, err := fkOrder([]*dumpTable{tab("x", "y"), tab("y", "x")}); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("cycle: %v", err)
	}
	if !isShadow("memories_fts_data", []string{"memories_fts"}) || isShadow("memories_data", []string{"memories_fts"}) {
		t.Fatal("isShadow")
	}
}
