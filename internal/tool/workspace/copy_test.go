package workspace_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
)

func TestCopy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "sess_a"), filepath.Join(dir, "sess_b")
	write(t, filepath.Join(src, "notes.md"), "notes")
	write(t, filepath.Join(src, "d", "e", "deep.txt"), "deep")
	write(t, filepath.Join(src, "d", ".x.tmp-0123456789abcdef"), "half")
	write(t, filepath.Join(dir, "secret"), "secret")
	if err := os.WriteFile(filepath.Join(src, "run.sh"), []byte("#!/bin/sh"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "secret"), filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(src, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := workspace.Claim(src, tool.Fence{RunID: "run_a", Attempt: 3}); err != nil {
		t.Fatal(err)
	}
	if err := workspace.Copy(src, dst); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"notes.md": "notes", "d/e/deep.txt": "deep", "run.sh": "#!/bin/sh"} {
		if got := readString(t, filepath.Join(dst, p)); got != want {
			t.Errorf("%s holds %q", p, got)
		}
	}
	for _, p := range []string{"link", "d/.x.tmp-0123456789abcdef", workspace.Reserved} {
		if _, err := os.Lstat(filepath.Join(dst, p)); !os.IsNotExist(err) {
			t.Errorf("%s was copied: %v", p, err)
		}
	}
	for p, want := range map[string]os.FileMode{"": 0o700, "d": 0o700, "empty": 0o700, "run.sh": 0o750, "notes.md": 0o644} {
		if info, err := os.Stat(filepath.Join(dst, p)); err != nil || info.Mode().Perm() != want {
			t.Errorf("%q: %v, %v; want %v", p, info.Mode().Perm(), err, want)
		}
	}
	// The copy is unfenced: the fork's first run claims it.
	if err := fencedWrite(dst, tool.Fence{}, "notes.md", "fork"); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(src, "notes.md")); got != "notes" {
		t.Fatalf("writing the copy changed the original: %q", got)
	}
	if err := workspace.Copy(filepath.Join(dir, "missing"), filepath.Join(dir, "sess_c")); err != nil {
		t.Fatalf("copying a workspace that does not exist: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sess_c")); !os.IsNotExist(err) {
		t.Fatalf("the copy of nothing made a workspace: %v", err)
	}
}
