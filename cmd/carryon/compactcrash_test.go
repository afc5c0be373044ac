package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/failpoint"
)

// TestCrashDuringCompaction kills a real server (SIGKILL, through a failpoint) inside the
// transaction of a run's automatic compaction and right after it committed, restarts it, and
// checks that the session holds the whole compaction or none: after the restart the run
// succeeds with exactly one compaction, under its step's request id, no message twice, and the
// history it covers unchanged. On both stores.
func TestCrashDuringCompaction(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts server processes")
	}
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			dsn := func() string { return "" }
			if store == "postgres" {
				dsn = func() string { return pgDatabase(t) }
			}
			baseline := compactingRun(t, "", dsn())
			for _, point := range []string{failpoint.CompactWriting, failpoint.CompactStored} {
				t.Run(point, func(t *testing.T) {
					t.Parallel()
					got := compactingRun(t, point, dsn())
					if got.compactions != baseline.compactions || got.messages != baseline.messages || got.attempt < 2 {
						t.Fatalf("after the crash: %+v; without one: %+v", got, baseline)
					}
				})
			}
		})
	}
}

// compacted is what a compacting run left: its session's compactions' request ids, its
// messages' roles and kinds in order, and the run's attempt.
type compacted struct {
	compactions, messages string
	attempt               float64
}

// compactingRun runs, on a server with the failpoint point ("" for none, then no crash), a run
// with its own compaction threshold on a session whose history is far over it; with a point it
// waits for the crash and restarts the server. It checks that the run succeeded, that each of
// its compactions is there once (under its step's request id, the first step's first) and that
// the history they cover is byte-identical to what it was.
func compactingRun(t *testing.T, point, db string) compacted {
	t.Helper()
	data := t.TempDir()
	srv := crashServer(t, data, point, db)
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	var msgs []any
	for i := 1; i <= 12; i++ {
		msgs = append(msgs,
			map[string]any{"role": "user", "content": fmt.Sprintf("Turn %d: look at module %d and list what it imports, with file names and line numbers.", i, i)},
			map[string]any{"role": "assistant", "content": fmt.Sprintf("Module %d imports three packages.", i)})
	}
	must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/messages", map[string]any{"messages": msgs}, 201)
	history, _ := json.Marshal(must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/messages?limit=100", nil, 200).json(t)["items"])
	runID := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "What did we find?", "compact_threshold": 300}, 202).json(t)["id"].(string)
	if point != "" {
		waitExit(t, srv)
		srv = crashServer(t, data, "", db)
	}
	run := waitRun(t, srv, key, runID)
	if run["status"] != "succeeded" {
		t.Fatalf("run: %v\nlogs:\n%s", run, srv.logs)
	}
	var out compacted
	out.attempt = run["attempt"].(float64)
	seen := map[string]bool{}
	for i, c := range must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/compactions", nil, 200).json(t)["items"].([]any) {
		id := c.(map[string]any)["request_id"].(string)
		if seen[id] || i == 0 && id != engine.CompactRequestID(runID, 1) || !strings.HasPrefix(id, runID+"/") {
			t.Fatalf("compaction %d: request id %s (twice: %v)", i, id, seen[id])
		}
		seen[id] = true
		out.compactions += strings.TrimPrefix(id, runID) + " "
	}
	page := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/messages?limit=100", nil, 200).json(t)["items"].([]any)
	for _, m := range page {
		m := m.(map[string]any)
		kind, _ := m["kind"].(string)
		out.messages += m["role"].(string) + "/" + kind + " "
	}
	if after, _ := json.Marshal(page[:24]); string(after) != string(history) {
		t.Fatalf("the history changed:\n%s\nwas\n%s", after, history)
	}
	if len(seen) == 0 {
		t.Fatalf("the run did not compact: %s", out.messages)
	}
	return out
}
