package sessions_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
)

// withWorkspaces gives the fixture a service that manages workspaces under a new directory.
func (f *fixture) withWorkspaces(t *testing.T) (string, *bytes.Buffer) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "workspaces")
	var log bytes.Buffer
	f.svc = sessions.New(f.st, sessions.Config{
		Now: f.clock.Now, IdleTTL: time.Hour, PurgeAfter: 24 * time.Hour, Workspaces: dir,
		Logger: slog.New(slog.NewTextHandler(&log, nil)),
	})
	return dir, &log
}

// put writes files into a session's workspace, as the agent's write_file would.
func put(t *testing.T, dir, id string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, id, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func exists(t *testing.T, p string) bool {
	t.Helper()
	_, err := os.Lstat(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

func TestDeleteRemovesWorkspace(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir, log := f.withWorkspaces(t)
	gone, kept := f.create(t, f.alice), f.create(t, f.alice)
	put(t, dir, gone.ID, map[string]string{"notes.md": "private", "d/e.txt": "more"})
	put(t, dir, kept.ID, map[string]string{"notes.md": "kept"})
	if err := workspace.Claim(filepath.Join(dir, gone.ID), tool.Fence{RunID: "run_a", Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	// A delete that is refused keeps the files.
	stale := int64(99)
	err := f.svc.Delete(f.alice, gone.ID, carryon.WriteOptions{ExpectedVersion: &stale})
	wantCode(t, err, carryon.EVERSION)
	wantCode(t, f.svc.Delete(f.bob, gone.ID, carryon.WriteOptions{}), carryon.ENOTFOUND)
	if !exists(t, filepath.Join(dir, gone.ID, "notes.md")) {
		t.Fatal("a refused delete removed the workspace")
	}
	if err := f.svc.Delete(f.alice, gone.ID, carryon.WriteOptions{RequestID: "del-1"}); err != nil {
		t.Fatal(err)
	}
	if exists(t, filepath.Join(dir, gone.ID)) {
		t.Fatal("the deleted session's workspace is still on disk")
	}
	if !exists(t, filepath.Join(dir, kept.ID, "notes.md")) {
		t.Fatal("another session's workspace was removed")
	}
	if err := f.svc.Delete(f.alice, gone.ID, carryon.WriteOptions{RequestID: "del-1"}); err != nil {
		t.Fatalf("the replayed delete: %v", err)
	}
	// A session that never had a workspace deletes cleanly.
	if err := f.svc.Delete(f.alice, f.create(t, f.alice).ID, carryon.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if log.Len() > 0 {
		t.Fatalf("logged: %s", log)
	}
}

func TestPurgeRemovesWorkspace(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir, log := f.withWorkspaces(t)
	gone := f.create(t, f.alice)
	put(t, dir, gone.ID, map[string]string{"notes.md": "private"})
	f.clock.Add(2 * time.Hour) // gone expires
	kept := f.create(t, f.alice)
	put(t, dir, kept.ID, map[string]string{"notes.md": "kept"})
	f.clock.Add(24 * time.Hour) // gone is past the purge horizon, kept is expired but inside it
	res, err := f.svc.Sweep(f.alice)
	if err != nil || res.Sessions != 1 {
		t.Fatalf("sweep = %+v, %v", res, err)
	}
	if exists(t, filepath.Join(dir, gone.ID)) {
		t.Fatal("the purged session's workspace is still on disk")
	}
	if !exists(t, filepath.Join(dir, kept.ID, "notes.md")) {
		t.Fatal("a session inside the purge horizon lost its workspace")
	}
	if log.Len() > 0 {
		t.Fatalf("logged: %s", log)
	}
}

func TestForkCopiesWorkspace(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir, log := f.withWorkspaces(t)
	s := f.create(t, f.alice)
	f.append(t, f.alice, s.ID, "step 1 done", "step 2 done")
	put(t, dir, s.ID, map[string]string{"step1.txt": "one", "out/step2.txt": "two", ".step3.txt.tmp-0123456789abcdef": "half"})
	if err := workspace.Claim(filepath.Join(dir, s.ID), tool.Fence{RunID: "run_a", Attempt: 2}); err != nil {
		t.Fatal(err)
	}
	fk, err := f.svc.Fork(f.alice, s.ID, carryon.ForkInput{AtVersion: 1, WriteOptions: carryon.WriteOptions{RequestID: "fork-1"}})
	if err != nil {
		t.Fatal(err)
	}
	// The files are copied as they are now, whatever at_version says.
	for p, want := range map[string]string{"step1.txt": "one", "out/step2.txt": "two"} {
		if b, err := os.ReadFile(filepath.Join(dir, fk.ID, p)); err != nil || string(b) != want {
			t.Errorf("the fork's %s: %q, %v", p, b, err)
		}
	}
	for _, p := range []string{workspace.Reserved, ".step3.txt.tmp-0123456789abcdef"} {
		if exists(t, filepath.Join(dir, fk.ID, p)) {
			t.Errorf("carryon's own %s was copied into the fork", p)
		}
	}
	// The fork's files are its own; a replay of the fork copies nothing again.
	put(t, dir, fk.ID, map[string]string{"step1.txt": "changed in the fork"})
	put(t, dir, s.ID, map[string]string{"step1.txt": "changed in the parent"})
	again, err := f.svc.Fork(f.alice, s.ID, carryon.ForkInput{AtVersion: 1, WriteOptions: carryon.WriteOptions{RequestID: "fork-1"}})
	if err != nil || again.ID != fk.ID {
		t.Fatalf("replay: %v %v", again, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, fk.ID, "step1.txt")); string(b) != "changed in the fork" {
		t.Fatalf("the fork's file holds %q after the replay", b)
	}
	// A fork of a session without a workspace has none either.
	bare := f.create(t, f.alice)
	fk2, err := f.svc.Fork(f.alice, bare.ID, carryon.ForkInput{})
	if err != nil {
		t.Fatal(err)
	}
	if exists(t, filepath.Join(dir, fk2.ID)) {
		t.Fatal("a fork of a session without files got a workspace")
	}
	if log.Len() > 0 {
		t.Fatalf("logged: %s", log)
	}
}

// TestFailedWorkspaceRemovalIsLogged: a workspace that cannot be removed does not fail the delete
// (the session is gone); the failure is logged.
func TestFailedWorkspaceRemovalIsLogged(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir, log := f.withWorkspaces(t)
	s := f.create(t, f.alice)
	put(t, dir, s.ID, map[string]string{"notes.md": "x"})
	// Permissions do not stop root, so make the workspaces directory a file: the workspace's path
	// then cannot be removed (ENOTDIR).
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Delete(f.alice, s.ID, carryon.WriteOptions{}); err != nil {
		t.Fatalf("the delete failed with its workspace: %v", err)
	}
	if !strings.Contains(log.String(), "remove the workspace of a deleted session") || !strings.Contains(log.String(), s.ID) {
		t.Fatalf("logged: %q", log)
	}
}

// The sweeper removes the workspace directories left by sessions that no longer exist (a crash
// between a deletion and its directory's removal, say) once they have been untouched for
// OrphanGrace, and keeps the directories of stored sessions and those touched since.
func TestSweepRemovesOrphanWorkspaces(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir, log := f.withWorkspaces(t)
	live := f.create(t, f.alice)
	long := time.Now().Add(-2 * sessions.OrphanGrace)
	for id, when := range map[string]time.Time{live.ID: long, "sess_orphan": long, "sess_fresh": time.Now(), "notes": long} {
		put(t, dir, id, map[string]string{"a.txt": "private"})
		if err := os.Chtimes(filepath.Join(dir, id), when, when); err != nil {
			t.Fatal(err)
		}
	}
	res, err := f.svc.Sweep(f.alice)
	if err != nil {
		t.Fatal(err)
	}
	if res.OrphanWorkspaces != 1 {
		t.Errorf("the sweep removed %d orphan workspaces, want 1", res.OrphanWorkspaces)
	}
	for id, want := range map[string]bool{live.ID: true, "sess_orphan": false, "sess_fresh": true, "notes": true} {
		if got := exists(t, filepath.Join(dir, id)); got != want {
			t.Errorf("%s exists: %v, want %v", id, got, want)
		}
	}
	if !strings.Contains(log.String(), "session_id=sess_orphan") {
		t.Errorf("the removal is not logged: %s", log)
	}
}

// The sweeper settles the staged files of imports cut off by a crash once they have been
// untouched for OrphanGrace: a stored session without a workspace gets them, a session that was
// not stored (the transaction never committed) or that has a workspace of its own since loses
// them, and a fresh staging directory (an import in flight) is left alone.
func TestSweepSettlesStagedImports(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir, log := f.withWorkspaces(t)
	stored := f.create(t, f.alice)
	busy := f.create(t, f.alice)
	put(t, dir, busy.ID, map[string]string{"own.txt": "its own"})
	long := time.Now().Add(-2 * sessions.OrphanGrace)
	stages := map[string]time.Time{
		"import-" + stored.ID + "-aaaa": long,
		"import-sess_notstored-bbbb":    long,
		"import-" + busy.ID + "-cccc":   long,
		"import-sess_inflight-dddd":     time.Now(),
		"import-notasession-eeee":       long,
	}
	for name, when := range stages {
		put(t, dir, name, map[string]string{"PLAN.md": "imported"})
		if err := os.Chtimes(filepath.Join(dir, name), when, when); err != nil {
			t.Fatal(err)
		}
	}
	res, err := f.svc.Sweep(f.alice)
	if err != nil {
		t.Fatal(err)
	}
	if res.StagedImports != 3 {
		t.Errorf("the sweep settled %d staged imports, want 3", res.StagedImports)
	}
	if b, err := os.ReadFile(filepath.Join(dir, stored.ID, "PLAN.md")); err != nil || string(b) != "imported" {
		t.Errorf("the stored session's imported file = %q, %v", b, err)
	}
	if exists(t, filepath.Join(dir, busy.ID, "PLAN.md")) || !exists(t, filepath.Join(dir, busy.ID, "own.txt")) {
		t.Error("a session with a workspace of its own had it changed by a staged import")
	}
	for name, want := range map[string]bool{"import-" + stored.ID + "-aaaa": false, "import-sess_notstored-bbbb": false,
		"import-" + busy.ID + "-cccc": false, "import-sess_inflight-dddd": true, "import-notasession-eeee": true} {
		if got := exists(t, filepath.Join(dir, name)); got != want {
			t.Errorf("%s exists: %v, want %v", name, got, want)
		}
	}
	if !strings.Contains(log.String(), "moved the files of a cut-off import into place") {
		t.Errorf("the move is not logged: %s", log)
	}
}
