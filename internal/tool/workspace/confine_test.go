package workspace_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
)

// setup returns a workspace holding a.txt, a file outside it, and links from the workspace to the
// outside: link.txt to the file and out to the directory.
func setup(t *testing.T) (ws, outside string) {
	t.Helper()
	dir := t.TempDir()
	ws, outside = filepath.Join(dir, "ws"), filepath.Join(dir, "outside")
	for _, d := range []string{ws, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(ws, "a.txt"), "hello")
	write(t, filepath.Join(outside, "secret.txt"), "secret")
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	return ws, outside
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func call(t *testing.T, x tool.Tool, ws string, args any) (tool.Result, error) {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return x.Call(context.Background(), tool.Call{Args: b, Workspace: ws, SessionID: "s", RunID: "r", IdempotencyKey: "r/0/0"})
}

func TestToolsRefuseEscapes(t *testing.T) {
	t.Parallel()
	ws, outside := setup(t)
	cases := []struct{ path, want string }{
		{"../x", "path ../x escapes the workspace"},
		{"a/../../x", "path a/../../x escapes the workspace"},
		{"/etc/passwd", "path /etc/passwd is absolute"},
		{"link.txt", "path link.txt escapes the workspace through a symbolic link"},
		{"out", "path out escapes the workspace through a symbolic link"},
		{"out/secret.txt", "path out/secret.txt escapes the workspace through a symbolic link"},
		{"out/new/deeper.txt", "path out/new/deeper.txt escapes the workspace through a symbolic link"},
	}
	tools := map[string]func(p string) any{
		"read_file":  func(p string) any { return map[string]string{"path": p} },
		"write_file": func(p string) any { return map[string]string{"path": p, "content": "pwned"} },
		"list_files": func(p string) any { return map[string]string{"path": p} },
	}
	for _, x := range workspace.Tools() {
		for _, tc := range cases {
			res, err := call(t, x, ws, tools[x.Name()](tc.path))
			if err == nil {
				t.Errorf("%s(%s) succeeded: %q", x.Name(), tc.path, res.Content)
				continue
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s(%s): error %q does not say %q", x.Name(), tc.path, err, tc.want)
			}
			if carryon.ErrorCode(err) != carryon.EINVALID {
				t.Errorf("%s(%s): code %q", x.Name(), tc.path, carryon.ErrorCode(err))
			}
		}
	}
	// Nothing outside was touched.
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "secret" {
		t.Fatalf("the outside file now holds %q", b)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("the outside directory holds %d entries, want 1", len(entries))
	}
}

func TestLinksInsideTheWorkspace(t *testing.T) {
	t.Parallel()
	ws, _ := setup(t)
	if err := os.Symlink("a.txt", filepath.Join(ws, "in.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(ws, "insub")); err != nil {
		t.Fatal(err)
	}
	res, err := call(t, workspace.ReadFile(), ws, map[string]string{"path": "in.txt"})
	if err != nil || res.Content != "hello" {
		t.Fatalf("reading through an inside link: %q, %v", res.Content, err)
	}
	// write_file refuses a target that is a link, even one that stays inside.
	_, err = call(t, workspace.WriteFile(), ws, map[string]string{"path": "in.txt", "content": "x"})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("writing a link target: %v", err)
	}
	// A linked parent directory inside the workspace is fine.
	if _, err := call(t, workspace.WriteFile(), ws, map[string]string{"path": "insub/b.txt", "content": "b"}); err != nil {
		t.Fatalf("writing through an inside directory link: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "sub", "b.txt")); string(b) != "b" {
		t.Fatalf("sub/b.txt = %q", b)
	}
}

func TestListDoesNotFollowLinks(t *testing.T) {
	t.Parallel()
	ws, _ := setup(t)
	write(t, filepath.Join(ws, "dir", "b.go"), "package b\n")
	write(t, filepath.Join(ws, "dir.txt"), "x")
	res, err := call(t, workspace.ListFiles(), ws, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"a.txt (5 bytes)",
		"dir.txt (1 bytes)",
		"dir/b.go (10 bytes)",
		"link.txt (symbolic link)",
		"out (symbolic link)",
	}, "\n")
	if res.Content != want {
		t.Fatalf("listing:\n%s\nwant:\n%s", res.Content, want)
	}
	if strings.Contains(res.Content, "secret") {
		t.Fatal("the listing shows a file outside the workspace")
	}
	res, err = call(t, workspace.ListFiles(), ws, map[string]any{"path": "dir"})
	if err != nil || res.Content != "dir/b.go (10 bytes)" {
		t.Fatalf("listing dir: %q, %v", res.Content, err)
	}
}

func TestNoWorkspace(t *testing.T) {
	t.Parallel()
	for _, x := range workspace.Tools() {
		if _, err := call(t, x, "", map[string]string{"path": "a", "content": "x"}); err == nil {
			t.Errorf("%s ran without a workspace", x.Name())
		}
	}
	// The workspace is created on demand by write_file and list_files.
	ws := filepath.Join(t.TempDir(), "later", "ws")
	if res, err := call(t, workspace.ListFiles(), ws, map[string]any{}); err != nil || res.Content != "(no files)" {
		t.Fatalf("listing a new workspace: %q, %v", res.Content, err)
	}
	if _, err := call(t, workspace.ReadFile(), filepath.Join(t.TempDir(), "none"), map[string]string{"path": "a"}); carryon.ErrorCode(err) != carryon.ENOTFOUND {
		t.Fatalf("reading from a missing workspace: %v", err)
	}
}
