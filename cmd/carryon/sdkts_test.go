package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/npmtest"
	"github.com/carryon-hub/carryon/internal/poll"
)

// The TypeScript SDK (sdk/typescript) is compiled once, with the tsc pinned in its own
// package-lock.json (`npm ci` there), and its test scripts run with node against real servers.
var (
	sdkOnce sync.Once
	sdkDir  string
	sdkErr  string
)

// buildSDK compiles the SDK, its examples and its test scripts into sdk/typescript/dist and
// returns the SDK's directory; without node or the SDK's dev dependencies the test is skipped
// (failed with CARRYON_TEST_REQUIRE_NPM=1).
func buildSDK(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		npmtest.Missing(t, "node is not on PATH")
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "sdk", "typescript"))
	if err != nil {
		t.Fatal(err)
	}
	tsc := filepath.Join(dir, "node_modules", "typescript", "bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		npmtest.Missing(t, "the TypeScript SDK's dev dependencies are not installed: run `npm ci` in sdk/typescript ("+err.Error()+")")
	}
	sdkOnce.Do(func() {
		out, err := exec.Command("node", tsc, "-p", dir).CombinedOutput()
		if err != nil {
			sdkErr = "tsc: " + err.Error() + "\n" + string(out)
			return
		}
		sdkDir = dir
	})
	if sdkErr != "" {
		t.Fatal(sdkErr)
	}
	return sdkDir
}

// nodeScript runs a compiled script of the SDK with env and returns its stdout.
func nodeScript(t *testing.T, srv *server, dir, script string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("node", append([]string{filepath.Join(dir, "dist", filepath.FromSlash(script))}, args...)...)
	cmd.Env = append(append(os.Environ(), env...), "CARRYON_URL="+srv.url)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s\nserver logs:\n%s", script, err, stderr.String(), srv.logs)
	}
	return stdout.String()
}

// sdkStores are the stores the SDK's tests run on: SQLite, and PostgreSQL when
// CARRYON_TEST_POSTGRES_URL is set.
func sdkStores(t *testing.T, test func(t *testing.T, db []string)) {
	t.Run("sqlite", func(t *testing.T) { t.Parallel(); test(t, nil) })
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		if os.Getenv("CARRYON_TEST_POSTGRES_URL") == "" {
			t.Skip("CARRYON_TEST_POSTGRES_URL is not set")
		}
		test(t, []string{"--db", pgDatabase(t)})
	})
}

// TestTypeScriptSDK runs the SDK's helper tests (test/helpers.ts: idempotent retries, Retry-After, usage and budgets,
// typed errors, the If-Match update helper, paging, a run's events, client tools, approvals and
// long-term memory with its consolidating adds, earlier versions and search modes) and then its example of the seed's task, in two node processes, against one
// server; and checks on the server what the scripts did.
func TestTypeScriptSDK(t *testing.T) {
	t.Parallel()
	dir := buildSDK(t)
	sdkStores(t, func(t *testing.T, db []string) {
		m := historyModel(t)
		agents := filepath.Join(t.TempDir(), "agents.yaml")
		if err := os.WriteFile(agents, []byte(`providers:
  offline: {kind: scripted}
  fake: {kind: openai, base_url: "`+m.URL+`/v1"}
agents:
  default: {provider: offline}
  gated:
    provider: offline
    approval: {write_file: always}
  weather: {provider: fake, model: gpt-test}
`), 0o600); err != nil {
			t.Fatal(err)
		}
		data := t.TempDir()
		srv := startServer(t, data, append([]string{"--agents", agents}, db...)...)
		key := localKey(t, data)
		bob := must(t, srv.url, key, "POST", "/v1/users", map[string]any{"name": "bob"}, 201).json(t)["key"].(string)

		var out struct {
			Session, PicnicRun, ToolRun, ApprovedSession, RejectedSession string
			PicnicEvents                                                  int
		}
		raw := nodeScript(t, srv, dir, "test/helpers.js", []string{"CARRYON_KEY=" + key, "BOB_KEY=" + bob})
		if err := json.Unmarshal([]byte(raw), &out); err != nil || out.Session == "" {
			t.Fatalf("the helpers script printed %q: %v", raw, err)
		}
		// The append whose answer was lost was stored once: seven user messages, two of them the
		// same words, and the last one deleted.
		msgs := must(t, srv.url, key, "GET", "/v1/sessions/"+out.Session+"/messages?include_deleted=true", nil, 200).json(t)["items"].([]any)
		if len(msgs) != 7 || msgs[6].(map[string]any)["deleted"] != true || msgs[0].(map[string]any)["content"] != "the same words" || msgs[2].(map[string]any)["content"] != "message 0" {
			t.Fatalf("the session's messages = %v", msgs)
		}
		if n := len(eventTypes(t, srv, key, out.PicnicRun)); n != out.PicnicEvents {
			t.Fatalf("the SDK saw %d events of the run, the server stored %d", out.PicnicEvents, n)
		}
		var client int
		for _, a := range must(t, srv.url, key, "GET", "/v1/runs/"+out.ToolRun+"/actions", nil, 200).json(t)["items"].([]any) {
			if a := a.(map[string]any); a["executor"] == "client" && a["status"] == "succeeded" && a["result"] == "sunny in Oslo" {
				client++
			}
		}
		if client != 1 {
			t.Fatalf("the client tool's journal has %d answered client calls, want 1", client)
		}
		written, ok := workspaceFiles(t, data, out.ApprovedSession)
		if !ok || !strings.Contains(written, "The plan, as the user wrote it.") {
			t.Fatalf("the approved write_file wrote %q (found %v)", written, ok)
		}
		if written, ok := workspaceFiles(t, data, out.RejectedSession); ok && written != "" {
			t.Fatalf("the rejected write_file wrote %q", written)
		}
		if db != nil {
			return // the seed's example runs once, on SQLite
		}

		// The seed's example: a new process continues the task the first process stated.
		var morning, afternoon struct{ Session_ID, Status, Goal, Next_Action, Reply string }
		if err := json.Unmarshal([]byte(nodeScript(t, srv, dir, "examples/continue-task.js", []string{"CARRYON_KEY=" + key})), &morning); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(morning.Session_ID, "sess_") || morning.Goal != "Write the release notes" || morning.Next_Action != "Collect the merged changes" {
			t.Fatalf("this morning: %+v", morning)
		}
		if err := json.Unmarshal([]byte(nodeScript(t, srv, dir, "examples/continue-task.js", []string{"CARRYON_KEY=" + key}, morning.Session_ID)), &afternoon); err != nil {
			t.Fatal(err)
		}
		if afternoon.Session_ID != morning.Session_ID || afternoon.Status != "succeeded" || afternoon.Goal != morning.Goal || afternoon.Next_Action != "Group them by area" ||
			!strings.Contains(afternoon.Reply, "Goal: Write the release notes") || !strings.Contains(afternoon.Reply, "Next action: Group them by area") {
			t.Fatalf("this afternoon: %+v (this morning %+v)", afternoon, morning)
		}
	})
}

// eventTypes is the types of a run's stored events by seq (1, 2, …), failing t on a gap.
func eventTypes(t *testing.T, srv *server, key, runID string) []string {
	t.Helper()
	var types []string
	for i, e := range storedEvents(t, srv, key, runID) {
		if e.Seq != int64(i+1) {
			t.Fatalf("stored event %d has seq %d", i+1, e.Seq)
		}
		types = append(types, e.Type)
	}
	return types
}

// workspaceFiles is the text of the files the agent wrote in a session's workspace (on the
// server's data directory), and whether it has any.
func workspaceFiles(t *testing.T, data, sid string) (string, bool) {
	t.Helper()
	var all strings.Builder
	found := false
	filepath.WalkDir(filepath.Join(data, "workspaces", sid), func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir // carryon's own files (the workspace fence)
		}
		if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
			b, _ := os.ReadFile(path)
			all.Write(b)
			found = true
		}
		return nil
	})
	return all.String(), found
}

// TestTypeScriptSDKAcrossKill: the SDK follows a run's event stream and sends a chat (a write
// that waits for its run); the server is killed with SIGKILL in the middle of both and started
// again on the same data and port. The stream resumes with Last-Event-ID and yields every stored
// event exactly once, to run.finished; the chat, sent again with the same Idempotency-Key, gets
// the answer of the one chat that was stored: one session, one message, one run.
func TestTypeScriptSDKAcrossKill(t *testing.T) {
	t.Parallel()
	dir := buildSDK(t)
	sdkStores(t, func(t *testing.T, db []string) {
		data := t.TempDir()
		flags := append([]string{"--scripted-delay", "2s", "--lease-ttl", "2s"}, db...)
		srv := startServer(t, data, flags...)
		key := localKey(t, data)
		addr := strings.TrimPrefix(srv.url, "http://")

		cmd := exec.Command("node", filepath.Join(dir, "dist", "test", "kill.js"))
		cmd.Env = append(os.Environ(), "CARRYON_URL="+srv.url, "CARRYON_KEY="+key)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr lockedBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		lines := make(chan map[string]any, 100)
		go func() {
			sc := bufio.NewScanner(stdout)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var m map[string]any
				if json.Unmarshal(sc.Bytes(), &m) == nil {
					lines <- m
				}
			}
			close(lines)
		}()
		next := func(what string) map[string]any {
			t.Helper()
			select {
			case m, ok := <-lines:
				if !ok {
					cmd.Wait()
					t.Fatalf("the script ended while the test waited for %s:\n%s\nserver logs:\n%s", what, stderr.String(), srv.logs)
				}
				return m
			case <-time.After(2 * time.Minute):
				t.Fatalf("no %s from the script:\n%s", what, stderr.String())
			}
			return nil
		}

		// Before the kill: the stream has its first events (the run in its first step), the chat is
		// stored and its run not done.
		var runID string
		seen, sent := 0, false
		for runID == "" || seen < 5 || !sent {
			m := next("the first events")
			switch {
			case m["run"] != nil:
				runID = m["run"].(string)
			case m["event"] != nil:
				seen++
			case m["chat"] == "sent":
				sent = true
			case m["chat"] != nil:
				t.Fatalf("the chat answered before the kill: %v", m)
			}
		}
		var chatSession string
		if !poll.Within(30*time.Second, func() bool {
			for _, s := range must(t, srv.url, key, "GET", "/v1/sessions", nil, 200).json(t)["items"].([]any) {
				id := s.(map[string]any)["id"].(string)
				runs := must(t, srv.url, key, "GET", "/v1/sessions/"+id+"/runs", nil, 200).json(t)["items"].([]any)
				if len(runs) == 1 && runs[0].(map[string]any)["id"] != runID {
					if st := runs[0].(map[string]any)["status"]; st != "queued" && st != "running" {
						t.Fatalf("the chat's run is %v before the kill; the test kills the server while the chat waits for it", st)
					}
					chatSession = id
					return true
				}
			}
			return false
		}) {
			t.Fatal("the chat's session and run were not stored")
		}
		srv.kill()
		srv = startServer(t, data, append([]string{"--addr", addr}, flags...)...)

		var done map[string]any
		for done == nil {
			if m := next("the end"); m["done"] != nil {
				done = m
			} else if m["chat"] != nil && m["chat"] != "succeeded" {
				t.Fatalf("the chat answered %v", m)
			}
		}
		for range lines {
			// the rest of its output, until the script closes it
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("the script: %v\n%s", err, stderr.String())
		}

		// Every stored event once, in order, to the end, including those stored after the restart; a
		// model delta may have come as a preview (seq 0) in place of its stored copy.
		types := eventTypes(t, srv, key, runID)
		evs := done["events"].([]any)
		yielded, last := map[int]bool{}, 0
		for _, e := range evs {
			seq := int(e.(map[string]any)["seq"].(float64))
			if seq == 0 {
				continue
			}
			if seq <= last {
				t.Fatalf("the stream yielded event %d after event %d: %v", seq, last, evs)
			}
			yielded[seq], last = true, seq
		}
		for seq := 1; seq <= len(types); seq++ {
			if !yielded[seq] && types[seq-1] != "model.delta" {
				t.Fatalf("the stream missed event %d (%s): %v", seq, types[seq-1], evs)
			}
		}
		if last != len(types) || types[last-1] != "run.finished" || len(evs) <= seen {
			t.Fatalf("the stream (%d events before the kill) ended at event %d of %d: %v", seen, last, len(types), evs)
		}
		attempt2 := false
		for _, e := range storedEvents(t, srv, key, runID) {
			attempt2 = attempt2 || e.Type == "run.started" && strings.Contains(string(e.Data), `"attempt":2`)
		}
		if !attempt2 {
			t.Fatalf("the run was not taken over after the restart: %v", types)
		}

		// The chat: sent before the kill, sent again after it with the same key, applied once.
		attempts := done["attempts"].([]any)
		first := attempts[0].(map[string]any)
		final := attempts[len(attempts)-1].(map[string]any)
		lostOne := false
		for _, a := range attempts {
			a := a.(map[string]any)
			if a["key"] != first["key"] || a["key"] == nil {
				t.Fatalf("the chat's attempts carry different keys: %v", attempts)
			}
			lostOne = lostOne || a["outcome"] == "network error"
		}
		if len(attempts) < 2 || !lostOne || final["outcome"] != "200" {
			t.Fatalf("the chat's attempts: %v", attempts)
		}
		var got []string
		for i, e := range evs {
			e := e.(map[string]any)
			got = append(got, fmt.Sprintf("%v:%v", e["seq"], e["type"]))
			if i+1 == seen {
				got = append(got, "(kill)")
			}
		}
		t.Logf("the stream: %s; the chat was sent %d times: %v", strings.Join(got, " "), len(attempts), attempts)
		chat := done["chat"].(map[string]any)
		if chat["session_id"] != chatSession || chat["status"] != "succeeded" {
			t.Fatalf("the chat answered %v; its session is %s", chat, chatSession)
		}
		if n := len(must(t, srv.url, key, "GET", "/v1/sessions", nil, 200).json(t)["items"].([]any)); n != 2 {
			t.Fatalf("%d sessions, want 2 (the run's and the chat's)", n)
		}
		runs := must(t, srv.url, key, "GET", "/v1/sessions/"+chatSession+"/runs", nil, 200).json(t)["items"].([]any)
		var users int
		for _, m := range must(t, srv.url, key, "GET", "/v1/sessions/"+chatSession+"/messages", nil, 200).json(t)["items"].([]any) {
			if m.(map[string]any)["role"] == "user" {
				users++
			}
		}
		if len(runs) != 1 || runs[0].(map[string]any)["id"] != chat["run_id"] || users != 1 {
			t.Fatalf("the chat's session has %d runs (%v) and %d user messages, want one of each", len(runs), runs, users)
		}
	})
}
