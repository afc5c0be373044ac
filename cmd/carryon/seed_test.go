package main

import (
	"strings"
	"sync"
	"testing"
)

// TestSeedDemoAcrossRestart is the seed's acceptance test on a real server process: request 1
// states a task without a session id; the server is killed with SIGKILL and started again on the
// same data; request 2 sends only the session id and "continue the task", and the answer knows the
// goal and the next action, which the context the model is sent shows too.
func TestSeedDemoAcrossRestart(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	const task = "Write a short guide to brewing green tea: research the water temperature, then draft the steps, then proofread the guide"

	first := must(t, srv.url, key, "POST", "/v1/chat", map[string]any{"message": task}, 200, "Idempotency-Key: seed-1").json(t)
	id, _ := first["session_id"].(string)
	wm1, _ := first["working_memory"].(map[string]any)
	goal, _ := wm1["goal"].(string)
	next1, _ := wm1["next_action"].(string)
	plan1, _ := wm1["plan"].([]any)
	if !strings.HasPrefix(id, "sess_") || goal == "" || next1 == "" || len(plan1) < 2 || first["status"] != "succeeded" {
		t.Fatalf("request 1: %v", first)
	}
	if reply := first["reply"].(string); !strings.Contains(reply, goal) || !strings.Contains(reply, next1) {
		t.Fatalf("reply 1 %q lacks the goal %q or the next action %q", reply, goal, next1)
	}

	srv.kill()
	srv = startServer(t, data)

	// A retry of request 1 after the restart is the same answer: no second session, no second run.
	again := must(t, srv.url, key, "POST", "/v1/chat", map[string]any{"message": task}, 200, "Idempotency-Key: seed-1").json(t)
	if again["session_id"] != id || again["run_id"] != first["run_id"] {
		t.Fatalf("request 1 retried after the restart: %v, first %v", again, first)
	}

	second := must(t, srv.url, key, "POST", "/v1/chat", map[string]any{"session_id": id, "message": "continue the task"}, 200).json(t)
	wm2, _ := second["working_memory"].(map[string]any)
	next2, _ := wm2["next_action"].(string)
	reply := second["reply"].(string)
	// The scripted model did the step in progress and moved the next action to the plan's next step.
	wantNext := plan1[1].(map[string]any)["title"].(string)
	if second["session_id"] != id || wm2["goal"] != goal || next2 != wantNext || next2 == next1 {
		t.Fatalf("request 2: %v (want goal %q, next action %q)", second, goal, wantNext)
	}
	if !strings.Contains(reply, "Goal: "+goal) || !strings.Contains(reply, "Next action: "+next2) {
		t.Fatalf("reply 2 %q does not state the goal %q and the next action %q", reply, goal, next2)
	}

	cx := must(t, srv.url, key, "GET", "/v1/sessions/"+id+"/context", nil, 200).json(t)
	found := false
	for _, p := range cx["parts"].([]any) {
		part := p.(map[string]any)
		if part["name"] == "working_memory" {
			content, _ := part["content"].(string)
			found = strings.Contains(content, "Goal: "+goal) && strings.Contains(content, "Next action: "+next2) && part["tokens"].(float64) > 0
		}
	}
	if !found {
		t.Fatalf("the context's working_memory part lacks the goal and the next action: %v", cx["parts"])
	}
	if !strings.Contains(cx["system"].(string), "Next action: "+next2) {
		t.Fatalf("the system message lacks the next action: %v", cx["system"])
	}
}

// TestRetriedRunRequest: a run request retried with the same Idempotency-Key, at the same time as
// the first, while its run is still going and after it ended, is one run and one user message.
func TestRetriedRunRequest(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data, "--scripted-delay", "1s")
	key := localKey(t, data)
	id := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	path := "/v1/sessions/" + id + "/runs"
	body := map[string]any{"message": "Task: plan a picnic: pick a park, then buy food, then invite friends"}

	var wg sync.WaitGroup
	answers := make([]response, 6)
	for i := range answers {
		wg.Go(func() {
			r, err := do(srv.url, key, "POST", path, body, "Idempotency-Key: run-1")
			if err != nil {
				t.Error(err)
			}
			answers[i] = r
		})
	}
	wg.Wait()
	runID := ""
	for i, a := range answers {
		switch {
		case a.status == 202:
			got := a.json(t)["id"].(string)
			if runID != "" && got != runID {
				t.Fatalf("answer %d started run %s, another %s", i, got, runID)
			}
			runID = got
		case a.status == 409 && strings.Contains(string(a.body), "request_in_flight"):
		default:
			t.Fatalf("answer %d: %d %s", i, a.status, a.body)
		}
	}
	if runID == "" {
		t.Fatal("no request started the run")
	}

	during := must(t, srv.url, key, "POST", path, body, 202, "Idempotency-Key: run-1")
	status := must(t, srv.url, key, "GET", "/v1/runs/"+runID, nil, 200).json(t)["status"]
	if during.json(t)["id"] != runID || during.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry during the run: %s (replayed %q)", during.body, during.header.Get("Idempotent-Replayed"))
	}
	if status != "queued" && status != "running" {
		t.Fatalf("the run was %v when retried, not still going: the delay is too short for this test", status)
	}

	if status = waitRun(t, srv, key, runID)["status"]; status != "succeeded" {
		t.Fatalf("run %s is %v", runID, status)
	}
	after := must(t, srv.url, key, "POST", path, body, 202, "Idempotency-Key: run-1")
	if after.json(t)["id"] != runID || after.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry after the run: %s", after.body)
	}

	runs := must(t, srv.url, key, "GET", path, nil, 200).json(t)["items"].([]any)
	if len(runs) != 1 || runs[0].(map[string]any)["id"] != runID {
		t.Fatalf("runs of the session: %v", runs)
	}
	users := 0
	for _, m := range must(t, srv.url, key, "GET", "/v1/sessions/"+id+"/messages", nil, 200).json(t)["items"].([]any) {
		if m.(map[string]any)["role"] == "user" {
			users++
		}
	}
	if users != 1 {
		t.Fatalf("%d user messages, want 1", users)
	}
}
