package longterm_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/longterm"
)

// A page of items stops at the read budget (8 MiB), before the item that would go past it, and
// its next_cursor goes on from there: 150 items of 60 KiB (9 MiB) take two pages of the default
// limit's size or more, each within the budget, and every item comes once, in order.
func TestListPastTheReadBudget(t *testing.T) {
	for name, st := range drivers(t) {
		t.Run(name, func(t *testing.T) {
			svc := longterm.New(st, nil)
			alice := carryon.NewContextWithUser(t.Context(), &carryon.User{ID: "usr_alice", Name: "usr_alice"})
			value, _ := json.Marshal(strings.Repeat("v", 60<<10))
			const n = 150
			for i := range n {
				if _, err := svc.Put(alice, "big", fmt.Sprintf("k%03d", i), carryon.LongTermPut{Value: value}); err != nil {
					t.Fatal(err)
				}
			}
			var keys []string
			pages := 0
			for cursor := ""; ; {
				page, err := svc.List(alice, carryon.LongTermFilter{Namespace: "big", Limit: 1000, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				pages++
				size := 0
				for _, it := range page.Items {
					keys, size = append(keys, it.Key), size+len(it.Value)
				}
				if size > carryon.DefaultMaxReadBytes {
					t.Fatalf("a page of %d items holds %d bytes", len(page.Items), size)
				}
				if cursor = page.NextCursor; cursor == "" {
					break
				}
			}
			if len(keys) != n || pages < 2 || keys[0] != "k000" || keys[n-1] != fmt.Sprintf("k%03d", n-1) {
				t.Fatalf("%d items in %d pages, want %d in 2 or more", len(keys), pages, n)
			}
			for i := 1; i < len(keys); i++ {
				if keys[i] <= keys[i-1] {
					t.Fatalf("out of order at %d: %s after %s", i, keys[i], keys[i-1])
				}
			}
		})
	}
}
