package workspace_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
)

func TestToolsAndEffects(t *testing.T) {
	t.Parallel()
	want := map[string]carryon.EffectClass{
		"read_file": carryon.EffectRead, "write_file": carryon.EffectReconcilable, "list_files": carryon.EffectRead,
	}
	tools := workspace.Tools()
	if len(tools) != len(want) {
		t.Fatalf("%d tools", len(tools))
	}
	if _, err := tool.NewRegistry(tools...); err != nil {
		t.Fatalf("the schemas do not register: %v", err)
	}
	for _, x := range tools {
		if want[x.Name()] != x.Effect() {
			t.Errorf("%s: effect %s", x.Name(), x.Effect())
		}
	}
	if _, ok := workspace.WriteFile().(tool.Reconciler); !ok {
		t.Error("write_file is not a Reconciler")
	}
}

func TestWriteAndRead(t *testing.T) {
	t.Parallel()
	ws := filepath.Join(t.TempDir(), "ws") // created on demand
	w, r := workspace.WriteFile(), workspace.ReadFile()
	res, err := call(t, w, ws, map[string]string{"path": "notes/deep/todo.md", "content": "one"})
	if err != nil {
		t.Fatal(err)
	}
	if res.FingerprintBefore != workspace.Absent || res.FingerprintAfter != tool.Fingerprint([]byte("one")) {
		t.Fatalf("fingerprints %s -> %s", res.FingerprintBefore, res.FingerprintAfter)
	}
	res, err = call(t, w, ws, map[string]string{"path": "./notes//deep/todo.md", "content": "two"})
	if err != nil {
		t.Fatal(err)
	}
	if res.FingerprintBefore != tool.Fingerprint([]byte("one")) || res.FingerprintAfter != tool.Fingerprint([]byte("two")) {
		t.Fatalf("fingerprints %s -> %s", res.FingerprintBefore, res.FingerprintAfter)
	}
	res, err = call(t, r, ws, map[string]string{"path": "notes/deep/todo.md"})
	if err != nil || res.Content != "two" {
		t.Fatalf("read %q, %v", res.Content, err)
	}
	if res.FingerprintBefore != tool.Fingerprint([]byte("two")) || res.FingerprintAfter != res.FingerprintBefore {
		t.Fatalf("read fingerprints %s %s", res.FingerprintBefore, res.FingerprintAfter)
	}
	entries, _ := os.ReadDir(filepath.Join(ws, "notes", "deep"))
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
	if _, err := call(t, r, ws, map[string]string{"path": "missing.txt"}); carryon.ErrorCode(err) != carryon.ENOTFOUND ||
		!strings.Contains(err.Error(), "missing.txt does not exist") {
		t.Fatalf("reading a missing file: %v", err)
	}
	if _, err := call(t, r, ws, map[string]string{"path": "notes"}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("reading a directory: %v", err)
	}
	if _, err := call(t, w, ws, map[string]string{"path": "notes", "content": "x"}); err == nil {
		t.Fatal("write_file replaced a directory")
	}
	if _, err := call(t, w, ws, map[string]string{"path": "a.txt"}); err == nil || !strings.Contains(err.Error(), `"content" is required`) {
		t.Fatalf("write without content: %v", err)
	}
}

func TestWriteKeepsPermissions(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	p := filepath.Join(ws, "run.sh")
	if err := os.WriteFile(p, []byte("old"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, workspace.WriteFile(), ws, map[string]string{"path": "run.sh", "content": "new"}); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(p); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("mode after write: %v, %v", info.Mode(), err)
	}
}

func TestSizeLimits(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	big := strings.Repeat("x", workspace.MaxWriteBytes+1)
	_, err := call(t, workspace.WriteFile(), ws, map[string]string{"path": "big.txt", "content": big})
	if carryon.ErrorCode(err) != carryon.ETOOLARGE {
		t.Fatalf("writing %d bytes: %v", len(big), err)
	}
	if _, err := os.Stat(filepath.Join(ws, "big.txt")); !os.IsNotExist(err) {
		t.Fatal("the oversized file was written")
	}
	// A file over the read limit is cut, with a note; the fingerprint covers the whole file.
	content := strings.Repeat("é", workspace.MaxReadBytes) // 2 bytes each
	write(t, filepath.Join(ws, "long.txt"), content)
	res, err := call(t, workspace.ReadFile(), ws, map[string]string{"path": "long.txt"})
	if err != nil {
		t.Fatal(err)
	}
	head, note, ok := strings.Cut(res.Content, "\n[truncated:")
	if !ok || len(head) != workspace.MaxReadBytes || !strings.Contains(note, fmt.Sprint(len(content))) {
		t.Fatalf("truncation: head %d bytes, note %q", len(head), note)
	}
	if res.FingerprintAfter != tool.Fingerprint([]byte(content)) {
		t.Fatal("the fingerprint does not cover the whole file")
	}
	write(t, filepath.Join(ws, "bin"), "a\x00b")
	if res, _ := call(t, workspace.ReadFile(), ws, map[string]string{"path": "bin"}); !strings.Contains(res.Content, "binary file") {
		t.Fatalf("binary file: %q", res.Content)
	}
}

func TestListIsBounded(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for i := range workspace.MaxListEntries + 5 {
		write(t, filepath.Join(ws, "d", fmt.Sprintf("f%04d", i)), "")
	}
	res, err := call(t, workspace.ListFiles(), ws, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(res.Content, "\n")
	if len(lines) != workspace.MaxListEntries+1 || !strings.Contains(lines[len(lines)-1], "listing stopped") {
		t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
	if lines[0] != "d/f0000 (0 bytes)" {
		t.Fatalf("first line %q", lines[0])
	}
}

// TestWriteIsAtomic writes two large contents in turn while readers read the file in a loop: every
// read must see one content whole, never a mix or a partial file.
func TestWriteIsAtomic(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	const size = 512 << 10
	contents := []string{strings.Repeat("a", size), strings.Repeat("b", size)}
	w := workspace.WriteFile()
	if _, err := call(t, w, ws, map[string]string{"path": "f.txt", "content": contents[0]}); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var reads atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for range 2 {
		wg.Go(func() {
			for !stop.Load() {
				b, err := os.ReadFile(filepath.Join(ws, "f.txt"))
				if err != nil {
					errs <- err.Error()
					return
				}
				if !bytes.Equal(b, []byte(contents[0])) && !bytes.Equal(b, []byte(contents[1])) {
					errs <- fmt.Sprintf("read %d bytes of a mixed or partial file", len(b))
					return
				}
				reads.Add(1)
			}
		})
	}
	for i := range 40 {
		if _, err := call(t, w, ws, map[string]string{"path": "f.txt", "content": contents[(i+1)%2]}); err != nil {
			t.Error(err)
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if reads.Load() == 0 {
		t.Fatal("the readers never read")
	}
}

func TestReconcile(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	rec := workspace.WriteFile().(tool.Reconciler)
	reconcile := func(content string) (tool.Outcome, error) {
		args, _ := json.Marshal(map[string]string{"path": "dir/f.txt", "content": content})
		return rec.Reconcile(context.Background(), tool.Call{Args: args, Workspace: ws})
	}
	if got, err := reconcile("new"); got != tool.NotApplied || err != nil {
		t.Fatalf("absent file: %s, %v", got, err)
	}
	write(t, filepath.Join(ws, "dir", "f.txt"), "old")
	if got, err := reconcile("new"); got != tool.NotApplied || err != nil {
		t.Fatalf("old content: %s, %v", got, err)
	}
	if _, err := call(t, workspace.WriteFile(), ws, map[string]string{"path": "dir/f.txt", "content": "new"}); err != nil {
		t.Fatal(err)
	}
	if got, err := reconcile("new"); got != tool.Applied || err != nil {
		t.Fatalf("after the write: %s, %v", got, err)
	}
	// The target cannot be read as a file: the answer is Unknown, with the reason.
	if err := os.Remove(filepath.Join(ws, "dir", "f.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "dir", "f.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := reconcile("new"); got != tool.Unknown || err == nil {
		t.Fatalf("a directory in place of the file: %s, %v", got, err)
	}
	if got, err := rec.Reconcile(context.Background(), tool.Call{Args: json.RawMessage(`{"path":"../x","content":"c"}`), Workspace: ws}); got != tool.Unknown || err == nil {
		t.Fatalf("an escaping path: %s, %v", got, err)
	}
	if got, err := rec.Reconcile(context.Background(), tool.Call{Args: json.RawMessage(`{"path":"f","content":"c"}`),
		Workspace: filepath.Join(ws, "missing")}); got != tool.NotApplied || err != nil {
		t.Fatalf("a missing workspace: %s, %v", got, err)
	}
}
