package postgres

import (
	"fmt"
	"testing"

	"github.com/carryon-hub/carryon/internal/store/sqlq"
)

// A statement text is rewritten once: later executions take the cached $n form without
// allocating, and texts beyond the bound are rewritten each time rather than stored.
func TestRebindCache(t *testing.T) {
	const q = `SELECT seq FROM messages WHERE session_key = ? AND seq > ? ORDER BY seq LIMIT ?`
	if got, want := rebind(q), sqlq.Rebind(q); got != want {
		t.Fatalf("rebind = %q, want %q", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { _ = rebind(q) }); n != 0 {
		t.Fatalf("a cached statement costs %v allocations an execution, want 0", n)
	}
	t.Cleanup(func() { rebound.Clear(); reboundSize.Store(0) }) // the other tests' statements are cached again
	for i := 0; reboundSize.Load() < maxRebound; i++ {
		rebind(fmt.Sprintf("SELECT %d WHERE a = ?", i))
	}
	extra := "SELECT 'past the bound' WHERE a = ?"
	if got := rebind(extra); got != "SELECT 'past the bound' WHERE a = $1" {
		t.Fatalf("past the bound: %q", got)
	}
	if _, stored := rebound.Load(extra); stored || reboundSize.Load() != maxRebound {
		t.Fatalf("a text past the bound was stored (%d texts)", reboundSize.Load())
	}
	if got := rebind(q); got != sqlq.Rebind(q) {
		t.Fatalf("a cached text after the bound: %q", got)
	}
}
