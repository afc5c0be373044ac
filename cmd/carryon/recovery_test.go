package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/failpoint"
	"github.com/carryon-hub/carryon/internal/tool/testtools"
)

// bigContent is written in several chunks by write_file, so a crash can cut it in the middle.
var bigContent = strings.Repeat("carryon keeps what was acknowledged.\n", 1500)

// crashTask is a task whose first step makes four tool calls: update_working_memory (idempotent),
// write_file PLAN.md and big.txt (reconcilable), and test_tally (idempotent, counts itself).
func crashTask() string {
	args, _ := json.Marshal(map[string]string{"path": "big.txt", "content": bigContent})
	return "New task: ship the notes\n/tool write_file " + string(args) + "\n/tool test_tally {}"
}

// crashServer starts a server with the test tools, a short lease and optional failpoints, on the
// SQLite database of data, or on the PostgreSQL database dsn when it is set.
func crashServer(t *testing.T, data string, failpoints string, dsn ...string) *server {
	env := []string{"CARRYON_TEST_TOOLS=1"}
	if failpoints != "" {
		env = append(env, "CARRYON_FAILPOINT="+failpoints)
	}
	args := []string{"--lease-ttl", "1s"}
	if len(dsn) > 0 && dsn[0] != "" {
		args = append(args, "--db", dsn[0])
	}
	return startServerEnv(t, data, env, args...)
}

// waitExit waits for a server process that is expected to kill itself at a failpoint.
func waitExit(t *testing.T, srv *server) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- srv.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the server did not reach its failpoint; logs:\n%s", srv.logs)
	}
	if !strings.Contains(srv.logs.String(), "failpoint") {
		t.Fatalf("the server exited without reaching its failpoint; logs:\n%s", srv.logs)
	}
}

// crashPoint is a failpoint of the crash matrix, and what the journal must say of the action it
// cut off (index, and a part of its result), showing how recovery settled it.
type crashPoint struct {
	point  string
	index  int
	result string
	// ended says the crash came after the commit that ended the run: no attempt takes it over.
	ended bool
}

// TestCrashPointMatrix kills a real server at each point of a step with SIGKILL (from inside,
// through a failpoint), restarts it, and checks that the run completes with every effect exactly
// once: the files hold the intended content, the idempotent counter counted once, the working
// memory changed once, and no message is stored twice; that the run's event log says exactly what
// is stored (checkEvents); and that the Responses API shows the run as it shows the same run
// without a crash. On both stores. (On 9e1964c a kill after the final answer's commit left a
// succeeded run with two message.appended events of three, and its response incomplete.)
func TestCrashPointMatrix(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts server processes")
	}
	points := map[string]crashPoint{
		"started before the tool runs (reconcilable)": {failpoint.ActionStarted + "@3", 2, "wrote", false},
		"midway through a multi-chunk file write":     {failpoint.WriteMidway, 2, "wrote", false},
		"after the file write, before succeeded":      {failpoint.ActionRan + "@3", 2, "the result was checked", false},
		"after the counter ran, before succeeded":     {failpoint.ActionRan + "@4", 3, "already counted", false},
		"after a call's outcome, with the next start": {failpoint.ActionFinished + "@3", 3, "counted (1 in all)", false},
		"in the checkpoint, after the memory change":  {failpoint.StepPatched, 3, "counted (1 in all)", false},
		"during the first model call":                 {failpoint.ModelCall + "@1", 3, "counted (1 in all)", false},
		"during the model call after the tools":       {failpoint.ModelCall + "@2", 3, "counted (1 in all)", false},
		"after the tools' step was committed":         {failpoint.StepCommitted + "@1", 3, "counted (1 in all)", false},
		"after the final answer, which ended the run": {failpoint.StepCommitted + "@2", 3, "counted (1 in all)", true},
	}
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			dsn := func() string { return "" }
			if store == "postgres" {
				dsn = func() string { return pgDatabase(t) }
			}
			crashPoints(t, points, dsn)
		})
	}
}

// crashPoints runs the crash matrix's points on the database each call of dsn makes ("" for the
// data directory's SQLite), beside a run of the same task without a crash.
func crashPoints(t *testing.T, points map[string]crashPoint, dsn func() string) {
	baseline := func() string {
		data := t.TempDir()
		srv := crashServer(t, data, "", dsn())
		key := localKey(t, data)
		sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
		runID := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": crashTask()}, 202).json(t)["id"].(string)
		if run := waitRun(t, srv, key, runID); run["status"] != "succeeded" {
			t.Fatalf("the run without a crash: %v", run)
		}
		checkEvents(t, srv, key, sid, runID)
		return responseView(t, srv, key, runID)
	}()
	for name, c := range points {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, db := t.TempDir(), dsn()
			srv := crashServer(t, data, c.point, db)
			key := localKey(t, data)
			sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
			runID := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": crashTask()}, 202).json(t)["id"].(string)
			waitExit(t, srv)

			srv = crashServer(t, data, "", db)
			run := waitRun(t, srv, key, runID)
			if run["status"] != "succeeded" {
				t.Fatalf("run after restart: %v\nlogs:\n%s", run, srv.logs)
			}
			if attempt := run["attempt"].(float64); c.ended != (attempt == 1) {
				t.Fatalf("the run is at attempt %v; it ended before the crash: %v", attempt, c.ended)
			}
			ws := filepath.Join(data, "workspaces", sid)
			if b, err := os.ReadFile(filepath.Join(ws, "big.txt")); err != nil || string(b) != bigContent {
				t.Fatalf("big.txt holds %d bytes (%v), want the intended %d", len(b), err, len(bigContent))
			}
			if b, err := os.ReadFile(filepath.Join(ws, "PLAN.md")); err != nil || !strings.Contains(string(b), "ship the notes") {
				t.Fatalf("PLAN.md: %q %v", b, err)
			}
			tally, _ := testtools.ReadLines(filepath.Join(ws, testtools.TallyFile))
			if len(tally) != 1 {
				t.Fatalf("the counter counted %d times, want once: %v", len(tally), tally)
			}
			checkHistory(t, srv, key, sid)
			acts := must(t, srv.url, key, "GET", "/v1/runs/"+runID+"/actions", nil, 200).json(t)["items"].([]any)
			if len(acts) != 4 {
				t.Fatalf("journal holds %d actions, want 4", len(acts))
			}
			for _, a := range acts {
				if a := a.(map[string]any); a["status"] != "succeeded" {
					t.Fatalf("action %v %v", a["tool"], a["status"])
				}
			}
			if a := acts[c.index].(map[string]any); !strings.Contains(a["result"].(string), c.result) {
				t.Fatalf("action %d (%v) result %q, want it to say %q", c.index, a["tool"], a["result"], c.result)
			}
			checkEvents(t, srv, key, sid, runID)
			if got := responseView(t, srv, key, runID); got != baseline {
				t.Fatalf("the response after the crash:\n%s\nwithout a crash:\n%s", got, baseline)
			}
		})
	}
}

// checkHistory asserts the session holds one user message, one assistant message with the four
// calls, their four results (one per call id) and one final answer: nothing twice, nothing missing.
// The working memory changed once, in the commit that stored the tool results (same version).
func checkHistory(t *testing.T, srv *server, key, sid string) {
	t.Helper()
	page := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/messages?limit=100", nil, 200).json(t)["items"].([]any)
	roles := map[string]int{}
	results := map[string]int{}
	resultVersions := map[float64]bool{}
	for _, m := range page {
		m := m.(map[string]any)
		roles[m["role"].(string)]++
		if id, ok := m["tool_call_id"].(string); ok {
			results[id]++
			resultVersions[m["version"].(float64)] = true
		}
	}
	revs := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/memory/history", nil, 200).json(t)["items"].([]any)
	if len(revs) != 1 || len(resultVersions) != 1 || !resultVersions[revs[0].(map[string]any)["version"].(float64)] {
		t.Fatalf("the memory change and the tool results are not one commit: revisions %v, tool results at versions %v", revs, resultVersions)
	}
	if roles["user"] != 1 || roles["assistant"] != 2 || roles["tool"] != 4 || len(results) != 4 {
		t.Fatalf("history: roles %v, %d distinct tool results", roles, len(results))
	}
	mem := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/memory", nil, 200).json(t)
	if mem["memory_version"] != 1.0 {
		t.Fatalf("working memory changed %v times, want once", mem["memory_version"])
	}
	v := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"?messages=0", nil, 200).json(t)
	if int(v["message_count"].(float64)) != len(page) {
		t.Fatalf("message_count %v, history %d", v["message_count"], len(page))
	}
}

// TestUnsafeActionWaitsForApproval: an unsafe action cut off by a crash stops the run in
// waiting_approval; rerun completes it; skip continues with "skipped by the user".
func TestUnsafeActionWaitsForApproval(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts server processes")
	}
	for _, decision := range []string{"rerun", "skip"} {
		t.Run(decision, func(t *testing.T) {
			t.Parallel()
			data := t.TempDir()
			srv := crashServer(t, data, failpoint.ActionStarted+"@3")
			key := localKey(t, data)
			sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
			msg := "New task: log the release\n/tool test_append {\"text\":\"released\"}"
			runID := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": msg}, 202).json(t)["id"].(string)
			waitExit(t, srv)

			srv = crashServer(t, data, "")
			run := waitRun(t, srv, key, runID)
			if run["status"] != "waiting_approval" {
				t.Fatalf("run after restart: %v", run)
			}
			var waiting map[string]any
			for _, a := range must(t, srv.url, key, "GET", "/v1/runs/"+runID+"/actions", nil, 200).json(t)["items"].([]any) {
				if a := a.(map[string]any); a["status"] == "started" {
					waiting = a
				}
			}
			if waiting == nil || waiting["tool"] != "test_append" || waiting["effect"] != "unsafe" {
				t.Fatalf("waiting action: %v", waiting)
			}
			must(t, srv.url, key, "POST", "/v1/runs/"+runID+"/approve", map[string]any{"action_id": waiting["id"], "decision": "maybe"}, 400)
			must(t, srv.url, key, "POST", "/v1/runs/"+runID+"/approve", map[string]any{"action_id": waiting["id"], "decision": decision}, 200)
			run = waitRun(t, srv, key, runID)
			if run["status"] != "succeeded" {
				t.Fatalf("run after %s: %v", decision, run)
			}
			lines, _ := testtools.ReadLines(filepath.Join(data, "workspaces", sid, testtools.AppendFile))
			page := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/messages?limit=100", nil, 200).body
			switch decision {
			case "rerun":
				if len(lines) != 1 {
					t.Fatalf("append.log has %d lines after rerun, want 1", len(lines))
				}
			case "skip":
				if len(lines) != 0 || !strings.Contains(string(page), "skipped by the user") {
					t.Fatalf("after skip: %d lines; history %s", len(lines), page)
				}
			}
			must(t, srv.url, key, "POST", "/v1/runs/"+runID+"/approve", map[string]any{"action_id": waiting["id"], "decision": decision}, 409)
		})
	}
}

// TestCrashInsideAppendWithPatch: a server killed inside the transaction of an append with a
// working-memory patch, after the patch and before the messages, keeps neither; the client's
// retry with the same request id then stores both once.
func TestCrashInsideAppendWithPatch(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := crashServer(t, data, failpoint.AppendPatched)
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	body := map[string]any{"messages": []any{map[string]any{"role": "assistant", "content": "The park is chosen."}},
		"working_memory_patch": map[string]any{"goal": "plan a picnic", "next_action": "buy food"}}
	if r, err := do(srv.url, key, "POST", "/v1/sessions/"+sid+"/messages", body, "Idempotency-Key: evt-1"); err == nil {
		t.Fatalf("the append answered %d across its failpoint: %s", r.status, r.body)
	}
	waitExit(t, srv)
	srv = crashServer(t, data, "")
	v := must(t, srv.url, key, "GET", "/v1/sessions/"+sid, nil, 200).json(t)
	if v["version"] != 1.0 || len(v["messages"].([]any)) != 0 || len(v["working_memory"].(map[string]any)) != 0 {
		t.Fatalf("after the crash the session is %v; want it untouched", v)
	}
	res := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/messages", body, 201, "Idempotency-Key: evt-1").json(t)
	if res["version"] != 2.0 || res["working_memory"].(map[string]any)["working_memory"].(map[string]any)["goal"] != "plan a picnic" {
		t.Fatalf("the retry = %v", res)
	}
	v = must(t, srv.url, key, "GET", "/v1/sessions/"+sid, nil, 200).json(t)
	if v["version"] != 2.0 || len(v["messages"].([]any)) != 1 {
		t.Fatalf("after the retry the session is %v", v)
	}
}
