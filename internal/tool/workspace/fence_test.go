package workspace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
)

// fencedWrite runs write_file for attempt f.
func fencedWrite(ws string, f tool.Fence, path, content string) error {
	args, _ := json.Marshal(map[string]string{"path": path, "content": content})
	_, err := workspace.WriteFile().Call(context.Background(), tool.Call{Args: args, Workspace: ws, Fence: f})
	return err
}

func TestClaimRefusesStaleWrites(t *testing.T) {
	t.Parallel()
	ws := filepath.Join(t.TempDir(), "sess_a")
	a1, a2 := tool.Fence{RunID: "run_a", Attempt: 1}, tool.Fence{RunID: "run_a", Attempt: 2}
	if err := workspace.Claim(ws, a1); err != nil {
		t.Fatal(err)
	}
	if err := fencedWrite(ws, a1, "f.txt", "one"); err != nil {
		t.Fatalf("the claimed attempt cannot write: %v", err)
	}
	if err := workspace.Claim(ws, a2); err != nil {
		t.Fatal(err)
	}
	err := fencedWrite(ws, a1, "f.txt", "stale")
	if carryon.ErrorCode(err) != carryon.EFENCED || !strings.Contains(err.Error(), "attempt 1 of run run_a is stale") {
		t.Fatalf("a write of the stale attempt: %v", err)
	}
	if got := readString(t, filepath.Join(ws, "f.txt")); got != "one" {
		t.Fatalf("the stale write changed the file to %q", got)
	}
	if err := fencedWrite(ws, a1, "new.txt", "stale"); carryon.ErrorCode(err) != carryon.EFENCED {
		t.Fatalf("a stale write of a new file: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(ws, "new.txt")); !os.IsNotExist(err) {
		t.Fatalf("the stale write created its file: %v", err)
	}
	if err := fencedWrite(ws, a2, "f.txt", "two"); err != nil {
		t.Fatalf("the new attempt cannot write: %v", err)
	}
	if got := readString(t, filepath.Join(ws, "f.txt")); got != "two" {
		t.Fatalf("the file holds %q", got)
	}
	if err := fencedWrite(ws, tool.Fence{}, "f.txt", "unfenced"); carryon.ErrorCode(err) != carryon.EFENCED {
		t.Fatalf("an unfenced write to a claimed workspace: %v", err)
	}
	if err := fencedWrite(ws, tool.Fence{RunID: "run_a", Attempt: 3}, "f.txt", "ahead"); carryon.ErrorCode(err) != carryon.EFENCED {
		t.Fatalf("a write of an attempt that did not claim: %v", err)
	}

	// Claims only move forward.
	if err := workspace.Claim(ws, a1); carryon.ErrorCode(err) != carryon.EFENCED {
		t.Fatalf("attempt 1 claimed back from attempt 2: %v", err)
	}
	if err := workspace.Claim(ws, a2); err != nil {
		t.Fatalf("claiming the current token again: %v", err)
	}
	b1 := tool.Fence{RunID: "run_b", Attempt: 1}
	if err := workspace.Claim(ws, b1); err != nil {
		t.Fatalf("the next run cannot claim: %v", err)
	}
	if err := workspace.Claim(ws, a2); carryon.ErrorCode(err) != carryon.EFENCED {
		t.Fatalf("a superseded run claimed back: %v", err)
	}
	if err := fencedWrite(ws, a2, "f.txt", "stale"); carryon.ErrorCode(err) != carryon.EFENCED {
		t.Fatalf("the previous run wrote after the next one claimed: %v", err)
	}
	if err := fencedWrite(ws, b1, "f.txt", "b"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []tool.Fence{{}, {RunID: "run_c"}, {Attempt: 1}} {
		if err := workspace.Claim(ws, bad); carryon.ErrorCode(err) != carryon.EINVALID {
			t.Errorf("claim %+v: %v", bad, err)
		}
	}
}

func TestUnclaimedWorkspaceIsUnfenced(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := fencedWrite(ws, tool.Fence{}, "a.txt", "a"); err != nil {
		t.Fatalf("an unfenced write to an unclaimed workspace: %v", err)
	}
	if err := fencedWrite(ws, tool.Fence{RunID: "run_a", Attempt: 4}, "a.txt", "b"); err != nil {
		t.Fatalf("a fenced write to an unclaimed workspace: %v", err)
	}
}

func TestDamagedFenceRefusesUntilClaimed(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	a1 := tool.Fence{RunID: "run_a", Attempt: 1}
	if err := workspace.Claim(ws, a1); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, workspace.Reserved, "fence"), []byte(`{"run_id":"ru`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := fencedWrite(ws, a1, "f.txt", "x"); carryon.ErrorCode(err) != carryon.EFENCED || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("a write over a damaged fence: %v", err)
	}
	a2 := tool.Fence{RunID: "run_a", Attempt: 2}
	if err := workspace.Claim(ws, a2); err != nil {
		t.Fatalf("a claim cannot repair a damaged fence: %v", err)
	}
	if err := fencedWrite(ws, a2, "f.txt", "x"); err != nil {
		t.Fatal(err)
	}
}

// TestClaimsAndWritesConcurrently has writers of attempt 1 write in a loop while attempt 2 claims
// the workspace and writes: once the claim returned, no write of attempt 1 may land, so the file
// ends with attempt 2's content. Concurrent claims of many attempts end with the highest.
func TestClaimsAndWritesConcurrently(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	a1, a2 := tool.Fence{RunID: "run_a", Attempt: 1}, tool.Fence{RunID: "run_a", Attempt: 2}
	if err := workspace.Claim(ws, a1); err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 256<<10) // a write long enough for a claim to land while it is under way
	var claimed atomic.Bool
	var landed, refused, lateOK atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 6 {
		wg.Go(func() {
			for i := 0; refused.Load() < 50; i++ {
				after := claimed.Load()
				err := fencedWrite(ws, a1, "f.txt", fmt.Sprintf("attempt 1, writer %d, write %d\n%s", w, i, pad))
				switch {
				case err == nil && after:
					lateOK.Add(1)
				case err == nil:
					landed.Add(1)
				case carryon.ErrorCode(err) == carryon.EFENCED:
					refused.Add(1)
				default:
					errs <- err
					return
				}
			}
		})
	}
	for landed.Load() < 20 && len(errs) == 0 {
		if err := fencedWrite(ws, a1, "probe.txt", "x"); err != nil {
			t.Fatal(err)
		}
	}
	if err := workspace.Claim(ws, a2); err != nil {
		t.Fatal(err)
	}
	claimed.Store(true)
	if err := fencedWrite(ws, a2, "f.txt", "attempt 2"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := lateOK.Load(); n > 0 {
		t.Fatalf("%d writes of attempt 1 that started after attempt 2 claimed went through", n)
	}
	if got := readString(t, filepath.Join(ws, "f.txt")); got != "attempt 2" {
		t.Fatalf("a stale write landed after the claim: the file holds %q", got)
	}
	if entries, _ := os.ReadDir(ws); len(entries) != 3 { // f.txt, probe.txt, .carryon
		t.Fatalf("refused writes left files behind: %v", entries)
	}

	// Many attempts claim at once: the highest wins, the others either win first or are refused.
	ws2 := t.TempDir()
	var cg sync.WaitGroup
	cerrs := make(chan error, 20)
	for n := 1; n <= 20; n++ {
		cg.Go(func() {
			if err := workspace.Claim(ws2, tool.Fence{RunID: "run_a", Attempt: n}); err != nil && carryon.ErrorCode(err) != carryon.EFENCED {
				cerrs <- err
			}
		})
	}
	cg.Wait()
	close(cerrs)
	for err := range cerrs {
		t.Fatal(err)
	}
	if err := fencedWrite(ws2, tool.Fence{RunID: "run_a", Attempt: 20}, "f.txt", "x"); err != nil {
		t.Fatalf("the highest attempt does not hold the workspace: %v", err)
	}
	if err := fencedWrite(ws2, tool.Fence{RunID: "run_a", Attempt: 19}, "f.txt", "x"); carryon.ErrorCode(err) != carryon.EFENCED {
		t.Fatalf("attempt 19 still writes: %v", err)
	}
}

// TestClaimCleansTempFiles: a new attempt claiming the workspace is recovery time, so Claim
// removes what writes cut off by a crash left behind; Clean does the same alone.
func TestClaimCleansTempFiles(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	temps := []string{".notes.md.tmp-0123456789abcdef", filepath.Join("d", "e", ".x.tmp-fedcba9876543210")}
	keep := []string{"notes.md", ".env", filepath.Join("d", ".x.tmp-notours"), filepath.Join("d", "e", "x")}
	for _, p := range append(append([]string{}, temps...), keep...) {
		write(t, filepath.Join(ws, p), "x")
	}
	if err := workspace.Claim(ws, tool.Fence{RunID: "run_a", Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	for _, p := range temps {
		if _, err := os.Lstat(filepath.Join(ws, p)); !os.IsNotExist(err) {
			t.Errorf("%s survived the claim: %v", p, err)
		}
	}
	for _, p := range keep {
		if _, err := os.Lstat(filepath.Join(ws, p)); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	write(t, filepath.Join(ws, temps[1]), "x")
	if err := workspace.Clean(ws); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(ws, temps[1])); !os.IsNotExist(err) {
		t.Errorf("%s survived Clean: %v", temps[1], err)
	}
	if err := workspace.Clean(filepath.Join(ws, "missing")); err != nil {
		t.Errorf("cleaning a workspace that does not exist: %v", err)
	}
}

// TestClaimModes: the fence and the lock file are 0600 in a directory 0700, whatever the umask.
func TestClaimModes(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	ws := filepath.Join(t.TempDir(), "sess_a")
	if err := workspace.Claim(ws, tool.Fence{RunID: "run_a", Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(ws, workspace.Reserved)
	for p, want := range map[string]os.FileMode{ws: 0o700, own: 0o700, filepath.Join(own, "fence"): 0o600, filepath.Join(own, "lock"): 0o600} {
		if info, err := os.Stat(p); err != nil || info.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want %v", p, info.Mode().Perm(), err, want)
		}
	}
}

// A run's writes do not make its workspace again once it was removed with its session (deleted,
// purged or forgotten while the run was in a tool call): the attempt claimed the workspace
// before its first call, so a missing one is gone, and its files must not outlive the session.
func TestRemovedWorkspaceStaysRemoved(t *testing.T) {
	t.Parallel()
	ws := filepath.Join(t.TempDir(), "sess_gone")
	a1 := tool.Fence{RunID: "run_a", Attempt: 1}
	if err := workspace.Claim(ws, a1); err != nil {
		t.Fatal(err)
	}
	if err := fencedWrite(ws, a1, "notes.txt", "before"); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(ws); err != nil { // the session's deletion
		t.Fatal(err)
	}
	if err := fencedWrite(ws, a1, "notes.txt", "after"); carryon.ErrorCode(err) != carryon.ENOTFOUND || !strings.Contains(err.Error(), "workspace is gone") {
		t.Fatalf("a write after the workspace was removed: %v", err)
	}
	_, err := workspace.ListFiles().Call(context.Background(), tool.Call{Args: json.RawMessage(`{}`), Workspace: ws, Fence: a1})
	if carryon.ErrorCode(err) != carryon.ENOTFOUND {
		t.Fatalf("a listing after the workspace was removed: %v", err)
	}
	if _, err := os.Lstat(ws); !os.IsNotExist(err) {
		t.Fatalf("the run's tools made the removed workspace again: %v", err)
	}
}
