package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
)

// TestStaleRenameIsRefused covers a write that passed its first check and wrote its temporary
// file, and whose run was then claimed by a newer attempt: the check right before the rename
// refuses it, the target keeps its content and the temporary file is removed.
func TestStaleRenameIsRefused(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	a1 := tool.Fence{RunID: "run_a", Attempt: 1}
	if err := Claim(ws, a1); err != nil {
		t.Fatal(err)
	}
	root, err := openRoot(ws, false)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := replace(root, "d/f.txt", []byte("one"), 0, a1); err != nil {
		t.Fatal(err)
	}
	release, err := guard(root, a1) // the first check of the stale write passes
	if err != nil {
		t.Fatal(err)
	}
	release()
	if err := Claim(ws, tool.Fence{RunID: "run_a", Attempt: 2}); err != nil {
		t.Fatal(err)
	}
	if err := replace(root, "d/f.txt", []byte("stale"), 0, a1); carryon.ErrorCode(err) != carryon.EFENCED {
		t.Fatalf("the stale rename: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "d", "f.txt")); string(b) != "one" {
		t.Fatalf("the file holds %q", b)
	}
	if entries, _ := os.ReadDir(filepath.Join(ws, "d")); len(entries) != 1 {
		t.Fatalf("the refused write left %v", entries)
	}
}

func TestIsTemp(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		tempName("notes.md"):             true,
		".a.tmp-0123456789abcdef":        true,
		".a.tmp-0123456789abcde":         false,
		".a.tmp-0123456789abcdeg":        false,
		"a.tmp-0123456789abcdef":         false,
		"..tmp-0123456789abcdef":         false,
		".x.tmp-0123456789abcdef.md":     false,
		".x.tmp-00.tmp-0123456789abcdef": true,
	} {
		if isTemp(name) != want {
			t.Errorf("isTemp(%q) = %v", name, !want)
		}
	}
}
