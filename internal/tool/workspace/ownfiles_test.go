package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/carryon-hub/carryon/internal/tool/workspace"
)

// TestListHidesCarryonFiles leaves what a write cut off by a crash leaves (".name.tmp-HEX") and
// carryon's own directory in a workspace: list_files shows neither, and the file tools refuse
// their paths.
func TestListHidesCarryonFiles(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	write(t, filepath.Join(ws, "notes.md"), "notes")
	write(t, filepath.Join(ws, ".notes.md.tmp-0123456789abcdef"), "half a wri")
	write(t, filepath.Join(ws, "d", ".x.tmp-fedcba9876543210"), "half")
	write(t, filepath.Join(ws, ".carryon", "fence"), `{"run_id":"run_a","attempt":1}`)
	write(t, filepath.Join(ws, ".env"), "a dot file of the user's")
	res, err := call(t, workspace.ListFiles(), ws, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if want := ".env (24 bytes)\nnotes.md (5 bytes)"; res.Content != want {
		t.Fatalf("list_files shows:\n%s", res.Content)
	}
	for _, p := range []string{".carryon/fence", ".carryon", "./.carryon/../.carryon/lock", ".CARRYON/fence", ".notes.md.tmp-0123456789abcdef"} {
		for _, x := range workspace.Tools() {
			args := map[string]string{"path": p}
			if x.Name() == "write_file" {
				args["content"] = "x"
			}
			if _, err := call(t, x, ws, args); err == nil || !strings.Contains(err.Error(), "carryon") && !strings.Contains(err.Error(), "temporary") {
				t.Errorf("%s %s: %v", x.Name(), p, err)
			}
		}
	}
	if got := readString(t, filepath.Join(ws, ".carryon", "fence")); !strings.Contains(got, "run_a") {
		t.Fatalf("the fence was changed: %q", got)
	}
}

// TestModesIgnoreUmask writes with umask 0 into a workspaces directory of mode 0777: the workspace
// and the directories write_file makes are 0700, its new files 0600.
func TestModesIgnoreUmask(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	root := filepath.Join(t.TempDir(), "workspaces")
	if err := os.Mkdir(root, 0o777); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "sess_a")
	if _, err := call(t, workspace.WriteFile(), ws, map[string]string{"path": "d/e/f.txt", "content": "x"}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{ws: 0o700, filepath.Join(ws, "d"): 0o700, filepath.Join(ws, "d", "e"): 0o700, filepath.Join(ws, "d", "e", "f.txt"): 0o600} {
		if info, err := os.Stat(p); err != nil || info.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want %v", p, info.Mode().Perm(), err, want)
		}
	}
	// A workspaces directory that does not exist yet is made 0700 too.
	ws = filepath.Join(t.TempDir(), "missing", "sess_b")
	if _, err := call(t, workspace.WriteFile(), ws, map[string]string{"path": "f.txt", "content": "x"}); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(filepath.Dir(ws)); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("the workspaces directory: %v, %v", info.Mode().Perm(), err)
	}
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
