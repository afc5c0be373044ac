package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/carryon-hub/carryon/store/sqlite"
)

// TestBackupWhileServing: clients append without pause while `carryon backup` copies the live
// deployment; `carryon restore` puts it into an empty data directory; a server on it holds every
// append acknowledged before the backup began, each session's messages are whole and numbered
// without gaps, the workspace files are back, and the copy passes SQLite's integrity check.
func TestBackupWhileServing(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	// A run writes workspace files (the scripted model writes PLAN.md).
	planSession := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	runID := must(t, srv.url, key, "POST", "/v1/sessions/"+planSession+"/runs", map[string]any{"message": picnic}, 202).json(t)["id"].(string)
	if run := waitRun(t, srv, key, runID); run["status"] != "succeeded" {
		t.Fatalf("run = %v", run)
	}
	plan, err := os.ReadFile(filepath.Join(data, "workspaces", planSession, "PLAN.md"))
	if err != nil {
		t.Fatal(err)
	}

	const writers = 4
	var sessions [writers]string
	for i := range sessions {
		sessions[i] = must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	}
	var (
		mu        sync.Mutex
		acked     = map[string]bool{} // message text → acknowledged
		ackedAt   = map[string]int64{}
		clock     atomic.Int64 // a logical clock: acknowledgements before the backup began have lower values
		stop      = make(chan struct{})
		wg        sync.WaitGroup
		backupAt  int64
		appendErr atomic.Value
	)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				text := fmt.Sprintf("writer %d message %d", w, i)
				r, err := do(srv.url, key, "POST", "/v1/sessions/"+sessions[w]+"/messages", appendBody(text))
				if err != nil || r.status != 201 {
					appendErr.Store(fmt.Sprintf("append %q: %v %d %s", text, err, r.status, r.body))
					return
				}
				mu.Lock()
				acked[text], ackedAt[text] = true, clock.Add(1)
				mu.Unlock()
			}
		}()
	}
	// Let the writers get going, then back up while they write.
	if !within(60e9, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 40 }) {
		t.Fatalf("the writers did not get going: %v", appendErr.Load())
	}
	archive := filepath.Join(t.TempDir(), "carryon.tar.gz")
	backupAt = clock.Add(1)
	out, err := cliRun(context.Background(), srv, nil, nil, "backup", "--to", archive, "--data", data)
	if err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	mu.Lock()
	during := len(acked)
	mu.Unlock()
	close(stop)
	wg.Wait()
	if e := appendErr.Load(); e != nil {
		t.Fatal(e)
	}
	if !strings.Contains(out, "backup "+archive) || !strings.Contains(out, "workspace files") {
		t.Fatalf("backup said:\n%s", out)
	}
	if _, err := cliRun(context.Background(), srv, nil, nil, "backup", "--to", archive, "--data", data); err == nil {
		t.Fatalf("a second backup overwrote %s", archive)
	}

	restored := t.TempDir()
	out, err = cliRun(context.Background(), srv, nil, nil, "restore", "--from", archive, "--data", restored)
	if err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	if _, err := cliRun(context.Background(), srv, nil, nil, "restore", "--from", archive, "--data", restored); err == nil {
		t.Fatalf("a restore over a restored directory was allowed")
	}
	if _, err := sqlite.VerifyBackup(context.Background(), filepath.Join(restored, "carryon.db")); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(restored, "workspaces", planSession, "PLAN.md")); err != nil || string(got) != string(plan) {
		t.Fatalf("PLAN.md after the restore: %q, %v", got, err)
	}
	srv.kill()
	srv2 := startServer(t, restored)
	key2 := localKey(t, restored) // a new local key; the restored users' own keys still work
	for _, k := range []string{key, key2} {
		must(t, srv2.url, k, "GET", "/v1/me", nil, 200)
	}
	stored := map[string]bool{}
	for w, sid := range sessions {
		page := must(t, srv2.url, key, "GET", "/v1/sessions/"+sid+"/messages?limit=1000", nil, 200).json(t)
		items := page["items"].([]any)
		for i, it := range items {
			m := it.(map[string]any)
			if m["seq"] != float64(i+1) || m["content"] != fmt.Sprintf("writer %d message %d", w, i) {
				t.Fatalf("session %s: message %d is %v; the copy is not one consistent moment", sid, i, m)
			}
			stored[m["content"].(string)] = true
		}
		if v := must(t, srv2.url, key, "GET", "/v1/sessions/"+sid, nil, 200).json(t); v["message_count"] != float64(len(items)) {
			t.Fatalf("session %s counts %v messages and lists %d", sid, v["message_count"], len(items))
		}
	}
	before := 0
	for text, at := range ackedAt {
		if at < backupAt {
			before++
			if !stored[text] {
				t.Fatalf("%q was acknowledged before the backup began and is not in it", text)
			}
		}
	}
	t.Logf("%d appends acknowledged before the backup, %d by its end, %d in the copy", before, during, len(stored))
}
