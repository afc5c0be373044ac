package main

import (
	"testing"

	"github.com/carryon-hub/carryon/failpoint"
)

// An approval is a write like any other: a repeat with the same Idempotency-Key answers the first
// answer (and decides nothing again), another decision with the key is 422.
func TestApproveRetried(t *testing.T) {
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
