package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/failpoint"
	"github.com/carryon-hub/carryon/internal/sessions"
)

// TestImportCrash kills the server (SIGKILL, from a failpoint) inside an import's transaction,
// after its messages were written: after the restart nothing of the import is there, and the
// retry under the same request id imports the whole session once. Then it kills the server
// after an import committed, before its staged workspace files were moved into place: the retry
// answers the stored import, and the sweeper moves the files into the session's workspace (and
// removes the files staged by the import that never committed).
func TestImportCrash(t *testing.T) {
	t.Parallel()
	testImportCrash(t, "")
}

// TestImportCrashPostgres is TestImportCrash on PostgreSQL.
func TestImportCrashPostgres(t *testing.T) {
	t.Parallel()
	testImportCrash(t, pgDatabase(t))
}

func testImportCrash(t *testing.T, dsn string) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	var db []string
	if dsn != "" {
		db = []string{"--db", dsn}
	}
	data := t.TempDir()
	srv := startServerEnv(t, data, []string{"CARRYON_FAILPOINT=" + failpoint.ImportWriting + "," + failpoint.ImportCommitted}, db...)
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "carried"}, 201).json(t)["id"].(string)
	must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/messages", appendBody("the plan is ZEBRA"), 201)
	runID := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": `/tool write_file {"path":"PLAN.md","content":"zebra"}`}, 202).json(t)["id"].(string)
	if run := waitRun(t, srv, key, runID); run["status"] != "succeeded" {
		t.Fatalf("run: %v", run)
	}
	first := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/export", nil, 200).body

	// In the transaction: nothing stored.
	if r, err := do(srv.url, key, "POST", "/v1/sessions/import", first, ndjson, "Idempotency-Key: crash-1"); err == nil {
		t.Fatalf("the import was answered (%d %s); the server should have died in its transaction", r.status, r.body)
	}
	waitExit(t, srv)
	srv = startServerEnv(t, data, []string{"CARRYON_FAILPOINT=" + failpoint.ImportCommitted + "@2"}, db...)
	if n := sessionCount(t, srv, key); n != 1 {
		t.Fatalf("after a crash inside the import's transaction the user has %d sessions, want 1", n)
	}
	got := must(t, srv.url, key, "POST", "/v1/sessions/import", first, 201, ndjson, "Idempotency-Key: crash-1").json(t)
	newID := got["session"].(map[string]any)["id"].(string)
	sameBundle(t, first, must(t, srv.url, key, "GET", "/v1/sessions/"+newID+"/export", nil, 200).body)
	if b, err := os.ReadFile(filepath.Join(data, "workspaces", newID, "PLAN.md")); err != nil || string(b) != "zebra" {
		t.Fatalf("the imported file: %q %v", b, err)
	}

	// After the commit, before the files moved: the retry answers the import, the sweeper moves them.
	if r, err := do(srv.url, key, "POST", "/v1/sessions/import", first, ndjson, "Idempotency-Key: crash-2"); err == nil {
		t.Fatalf("the import was answered (%d %s); the server should have died after its commit", r.status, r.body)
	}
	waitExit(t, srv)
	stages, _ := filepath.Glob(filepath.Join(data, "workspaces", "import-*"))
	if len(stages) != 2 {
		t.Fatalf("staged imports after the crashes: %v, want two (one of each)", stages)
	}
	old := time.Now().Add(-2 * sessions.OrphanGrace)
	for _, s := range stages {
		if err := os.Chtimes(s, old, old); err != nil {
			t.Fatal(err)
		}
	}
	srv = startServer(t, data, append([]string{"--sweep-interval", "200ms"}, db...)...)
	r := must(t, srv.url, key, "POST", "/v1/sessions/import", first, 201, ndjson, "Idempotency-Key: crash-2")
	third := r.json(t)["session"].(map[string]any)["id"].(string)
	if r.header.Get("Idempotent-Replayed") != "true" || sessionCount(t, srv, key) != 3 {
		t.Fatalf("the retry after a crash past the commit: %s (replayed %q), %d sessions", r.body, r.header.Get("Idempotent-Replayed"), sessionCount(t, srv, key))
	}
	var b []byte
	if !within(30*time.Second, func() bool {
		b, _ = os.ReadFile(filepath.Join(data, "workspaces", third, "PLAN.md"))
		return string(b) == "zebra"
	}) {
		t.Fatalf("the sweeper did not move the cut-off import's file into place: %q; logs:\n%s", b, srv.logs)
	}
	if left, _ := filepath.Glob(filepath.Join(data, "workspaces", "import-*")); len(left) != 0 || !strings.Contains(srv.logs.String(), "cut-off import") {
		t.Fatalf("staged imports left: %v", left)
	}
}
