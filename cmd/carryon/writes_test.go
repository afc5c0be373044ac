package main

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/failpoint"
	"github.com/carryon-hub/carryon/internal/poll"
)

// version reads a session's version over HTTP.
func version(t *testing.T, srv *server, key, id string) int64 {
	t.Helper()
	return int64(must(t, srv.url, key, "GET", "/v1/sessions/"+id, nil, 200).json(t)["version"].(float64))
}

// eventually waits up to 30 s for cond (poll.Eventually).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Eventually(t, what, cond)
}

// within checks cond until it holds (true) or d has passed (false) (poll.Within).
func within(d time.Duration, cond func() bool) bool { return poll.Within(d, cond) }

// A client that gives up on a request (here a chat waiting for its run) is not a failure of the
// server: its request is logged and counted as 499, with no internal error in the logs and no
// failure in the metrics.
func TestClientThatLeavesIsNoError(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data, "--scripted-delay", "3s")
	key := localKey(t, data)
	id := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)

	ctx, leave := context.WithCancel(context.Background())
	defer leave()
	req, err := http.NewRequestWithContext(ctx, "POST", srv.url+"/v1/chat", strings.NewReader(`{"session_id":"`+id+`","message":"New task: wait"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	done := make(chan error, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
			err = fmt.Errorf("the chat answered %d before the client left", res.StatusCode)
		}
		done <- err
	}()
	eventually(t, "the chat's run to start", func() bool {
		items, _ := must(t, srv.url, key, "GET", "/v1/sessions/"+id+"/runs", nil, 200).json(t)["items"].([]any)
		return len(items) == 1 && items[0].(map[string]any)["status"] == "running"
	})
	leave()
	if err := <-done; !strings.Contains(fmt.Sprint(err), "context canceled") {
		t.Fatalf("client: %v", err)
	}
	chatLine := regexp.MustCompile(`(?m)^.*msg=request method=POST route=/v1/chat .*$`)
	eventually(t, "the chat's log line", func() bool { return chatLine.MatchString(srv.logs.String()) })
	logs := srv.logs.String()
	if line := chatLine.FindString(logs); !strings.Contains(line, "status=499") {
		t.Errorf("the chat's log line: %s", line)
	}
	if strings.Contains(logs, "level=ERROR") || strings.Contains(logs, "internal error") {
		t.Errorf("a client that left was logged as an error:\n%s", logs)
	}
	metrics := string(must(t, srv.url, "", "GET", "/metrics", nil, 200).body)
	if !strings.Contains(metrics, `carryon_http_requests_total{method="POST",route="/v1/chat",status="499"} 1`) {
		t.Errorf("no 499 for the chat in the metrics:\n%s", grep(metrics, "carryon_http_requests_total"))
	}
	if strings.Contains(metrics, `status="500"`) || strings.Contains(metrics, `outcome="internal"`) {
		t.Errorf("a client that left counts as a failure:\n%s", grep(metrics, `status="500"`, `outcome="internal"`))
	}
}

// grep returns the lines of s that contain any of the words.
func grep(s string, words ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// The CLI sends versions: with --expected-version its writes pass a server that requires them,
// a stale one is refused with the current version, and a chat keeps expecting the version its
// last run left.
func TestCLISendsVersions(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data, "--require-version")
	key := localKey(t, data)
	bg := context.Background()
	out, err := cliRun(bg, srv, nil, nil, "run", picnic)
	if err != nil {
		t.Fatalf("run on a new session needs no version: %v\n%s", err, out)
	}
	id := sessionLine.FindStringSubmatch(out)[1]
	v := version(t, srv, key, id)

	if out, err = cliRun(bg, srv, nil, nil, "run", "--session", id, "continue the task"); err == nil || !strings.Contains(err.Error(), "--expected-version") {
		t.Fatalf("run without a version on a strict server: %v\n%s", err, out)
	}
	if out, err = cliRun(bg, srv, nil, nil, "run", "--session", id, "--expected-version", fmt.Sprint(v-1), "continue the task"); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("at version %d", v)) {
		t.Fatalf("run with a stale version: %v\n%s", err, out)
	}
	if out, err = cliRun(bg, srv, nil, nil, "run", "--session", id, "--expected-version", fmt.Sprint(v), "continue the task"); err != nil || !strings.Contains(out, "Next action: Buy food.") {
		t.Fatalf("run with the version: %v\n%s", err, out)
	}
	if _, err = cliRun(bg, srv, nil, nil, "run", "--expected-version", "1", "a new session"); err == nil {
		t.Fatal("--expected-version without --session: no error")
	}

	// The chat sends the given version first, then the version each run left.
	v = version(t, srv, key, id)
	out, err = cliRun(bg, srv, strings.NewReader("continue the task\ncontinue the task\n"), nil, "chat", "--session", id, "--expected-version", fmt.Sprint(v))
	if err != nil || strings.Contains(out, "error:") || strings.Count(out, "Continuing the task.") != 2 {
		t.Fatalf("chat with versions: %v\n%s", err, out)
	}
	out, err = cliRun(bg, srv, strings.NewReader("continue the task\n"), nil, "chat", "--session", id)
	if err != nil || !strings.Contains(out, "--expected-version") || strings.Contains(out, "Continuing the task.") {
		t.Fatalf("chat without a version on a strict server: %v\n%s", err, out)
	}

	for _, cmd := range []string{"close", "restore", "rm"} {
		if _, err := cliRun(bg, srv, nil, nil, "sessions", cmd, id); err == nil || !strings.Contains(err.Error(), "version_required") && !strings.Contains(err.Error(), "requires the expected version") {
			t.Fatalf("sessions %s without a version: %v", cmd, err)
		}
		v := version(t, srv, key, id)
		if out, err := cliRun(bg, srv, nil, nil, "sessions", cmd, id, "--expected-version", fmt.Sprint(v)); err != nil {
			t.Fatalf("sessions %s --expected-version %d: %v\n%s", cmd, v, err, out)
		}
	}
	must(t, srv.url, key, "GET", "/v1/sessions/"+id, nil, 404)
}

// An approval is a write like any other: a repeat with the same Idempotency-Key answers the first
// answer (and decides nothing again), another decision with the key is 422.
func TestApproveRetried(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts server processes")
	}
	data := t.TempDir()
	srv := crashServer(t, data, failpoint.ActionStarted+"@3")
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	msg := "New task: log the release\n/tool test_append {\"text\":\"released\"}"
	runID := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": msg}, 202).json(t)["id"].(string)
	waitExit(t, srv)
	srv = crashServer(t, data, "")
	if run := waitRun(t, srv, key, runID); run["status"] != "waiting_approval" {
		t.Fatalf("run after restart: %v", run)
	}
	var actionID string
	for _, a := range must(t, srv.url, key, "GET", "/v1/runs/"+runID+"/actions", nil, 200).json(t)["items"].([]any) {
		if a := a.(map[string]any); a["status"] == "started" {
			actionID = a["id"].(string)
		}
	}
	path := "/v1/runs/" + runID + "/approve"
	skip := map[string]any{"action_id": actionID, "decision": "skip"}
	first := must(t, srv.url, key, "POST", path, skip, 200, "Idempotency-Key: approve-1")
	again := must(t, srv.url, key, "POST", path, skip, 200, "Idempotency-Key: approve-1")
	if string(again.body) != string(first.body) || again.header.Get("Idempotent-Replayed") != "true" || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("repeat: %s (replayed %q); first: %s", again.body, again.header.Get("Idempotent-Replayed"), first.body)
	}
	must(t, srv.url, key, "POST", path, map[string]any{"action_id": actionID, "decision": "rerun"}, 422, "Idempotency-Key: approve-1")
	must(t, srv.url, key, "POST", path, skip, 409)
	if run := waitRun(t, srv, key, runID); run["status"] != "succeeded" {
		t.Fatalf("run after the approval: %v", run)
	}
}
