package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/tool"
)

// TestRootRefusesEscapesAlone checks the second line of defence: with the path checks skipped (as
// when a link is swapped in after them), the os.Root operations still refuse to leave the workspace.
func TestRootRefusesEscapesAlone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws, outside := filepath.Join(dir, "ws"), filepath.Join(dir, "outside")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	root, err := openRoot(ws, false)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := replace(root, "out/new.txt", []byte("pwned"), 0, tool.Fence{}); err == nil {
		t.Fatal("replace wrote through a link out of the workspace")
	}
	if err := replace(root, "out/secret.txt", []byte("pwned"), 0, tool.Fence{}); err == nil {
		t.Fatal("replace overwrote a file out of the workspace")
	}
	if _, _, err := current(root, "out/secret.txt", "out/secret.txt"); err == nil {
		t.Fatal("current read a file out of the workspace")
	}
	entries, _ := os.ReadDir(outside)
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); len(entries) != 1 || string(b) != "secret" {
		t.Fatalf("the outside directory was changed: %d entries, secret %q", len(entries), b)
	}
	_, err = root.Open("out/secret.txt")
	if got := describe("read_file", "out/secret.txt", err); got == nil ||
		!strings.Contains(got.Error(), "path out/secret.txt escapes the workspace") {
		t.Fatalf("the os.Root refusal reads %v", got)
	}
}
