package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// TestServeWorkspaceLifecycle runs a real server under umask 0 in a data directory of mode 0777:
// the database, the key file and the workspace files are private all the same; a fork starts with
// its parent's files, and deleting a session removes its workspace.
func TestServeWorkspaceLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	old := syscall.Umask(0) // the server inherits it
	restore := sync.OnceFunc(func() { syscall.Umask(old) })
	defer restore()
	data := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(data, 0o777); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, data)
	restore()
	workspaceLifecycle(t, srv, data)
}

func workspaceLifecycle(t *testing.T, srv *server, data string) {
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	args, _ := json.Marshal(map[string]string{"path": "notes/step1.md", "content": "step 1 done"})
	runID := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "/tool write_file " + string(args)}, 202).json(t)["id"].(string)
	if run := waitRun(t, srv, key, runID); run["status"] != "succeeded" {
		t.Fatalf("run: %v\nlogs:\n%s", run, srv.logs)
	}
	wsRoot := filepath.Join(data, "workspaces")
	ws := filepath.Join(wsRoot, sid)
	for p, want := range map[string]os.FileMode{
		filepath.Join(data, "carryon.db"): 0o600, filepath.Join(data, "local.key"): 0o600,
		wsRoot: 0o700, ws: 0o700, filepath.Join(ws, "notes"): 0o700, filepath.Join(ws, "notes", "step1.md"): 0o600,
	} {
		if info, err := os.Stat(p); err != nil || info.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want %v", p, info.Mode().Perm(), err, want)
		}
	}

	fork := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/fork", map[string]any{}, 201).json(t)["id"].(string)
	if b, err := os.ReadFile(filepath.Join(wsRoot, fork, "notes", "step1.md")); err != nil || string(b) != "step 1 done" {
		t.Fatalf("the fork's copy of step1.md: %q, %v", b, err)
	}
	must(t, srv.url, key, "DELETE", "/v1/sessions/"+sid, nil, 204)
	if _, err := os.Lstat(ws); !os.IsNotExist(err) {
		t.Fatalf("the deleted session's workspace is still on disk: %v", err)
	}
	if _, err := os.Stat(filepath.Join(wsRoot, fork, "notes", "step1.md")); err != nil {
		t.Fatalf("deleting the parent removed the fork's files: %v", err)
	}
}
