package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestApprovalBeforeCallAcrossRestart: a profile whose write_file asks for approval stops the run
// before the call with the proposed arguments; the server is killed and restarted; another user
// gets 404 on the run, its journal and the decision; approving with edited arguments writes what
// the user chose (the journal keeps the model's), and a rejection tells the model and writes
// nothing.
func TestApprovalBeforeCallAcrossRestart(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(file, []byte(`providers:
  offline: {kind: scripted}
agents:
  default:
    provider: offline
    approval: {write_file: always}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	srv := startServer(t, data, "--agents", file)
	key := localKey(t, data)
	bob := addUser(t, data, "bob")

	waiting := func() (sid, runID string, action map[string]any) {
		t.Helper()
		sid = must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
		runID = must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": picnic}, 202).json(t)["id"].(string)
		if run := waitRun(t, srv, key, runID); run["status"] != "waiting_approval" {
			t.Fatalf("run = %v, want waiting_approval", run)
		}
		for _, a := range must(t, srv.url, key, "GET", "/v1/runs/"+runID+"/actions", nil, 200).json(t)["items"].([]any) {
			if a := a.(map[string]any); a["tool"] == "write_file" {
				action = a
			}
		}
		if action == nil || action["status"] != "waiting" || action["approval"] != "required" {
			t.Fatalf("no write_file waiting for approval: %v", action)
		}
		return sid, runID, action
	}
	workspaceFile := func(sid, name string) (string, bool) {
		b, err := os.ReadFile(filepath.Join(data, "workspaces", sid, name))
		return string(b), err == nil
	}

	sid, runID, action := waiting()
	path := action["args"].(map[string]any)["path"].(string)
	srv.kill()
	srv = startServer(t, data, "--agents", file)
	if run := waitRun(t, srv, key, runID); run["status"] != "waiting_approval" {
		t.Fatalf("after the restart the run is %v", run["status"])
	}
	if _, ok := workspaceFile(sid, path); ok {
		t.Fatalf("%s was written before its approval", path)
	}
	approve := map[string]any{"action_id": action["id"], "decision": "approve",
		"arguments": map[string]any{"path": path, "content": "# Picnic\n\nThe plan, as the user wrote it.\n"}}
	must(t, srv.url, bob, "GET", "/v1/runs/"+runID, nil, 404)
	must(t, srv.url, bob, "GET", "/v1/runs/"+runID+"/actions", nil, 404)
	must(t, srv.url, bob, "POST", "/v1/runs/"+runID+"/approve", approve, 404)
	must(t, srv.url, key, "POST", "/v1/runs/"+runID+"/approve", approve, 200, "Idempotency-Key: approve-1")
	must(t, srv.url, key, "POST", "/v1/runs/"+runID+"/approve", approve, 200, "Idempotency-Key: approve-1")
	if run := waitRun(t, srv, key, runID); run["status"] != "succeeded" {
		t.Fatalf("after the approval the run is %v", run)
	}
	if got, _ := workspaceFile(sid, path); got != "# Picnic\n\nThe plan, as the user wrote it.\n" {
		t.Fatalf("%s holds %q, want the edited content", path, got)
	}
	for _, a := range must(t, srv.url, key, "GET", "/v1/runs/"+runID+"/actions", nil, 200).json(t)["items"].([]any) {
		if a := a.(map[string]any); a["id"] == action["id"] && (a["approval"] != "edited" || a["original_args"] == nil || a["status"] != "succeeded") {
			t.Fatalf("journal of the approved call: %v", a)
		}
	}

	sid, runID, action = waiting()
	reject := map[string]any{"action_id": action["id"], "decision": "reject", "reason": "no files today"}
	must(t, srv.url, key, "POST", "/v1/runs/"+runID+"/approve", reject, 200)
	run := waitRun(t, srv, key, runID)
	if run["status"] != "succeeded" {
		t.Fatalf("after the rejection the run is %v", run)
	}
	if _, ok := workspaceFile(sid, path); ok {
		t.Fatalf("%s was written although the call was rejected", path)
	}
	for _, a := range must(t, srv.url, key, "GET", "/v1/runs/"+runID+"/actions", nil, 200).json(t)["items"].([]any) {
		if a := a.(map[string]any); a["id"] == action["id"] && (a["approval"] != "rejected" || !strings.Contains(a["result"].(string), "rejected by the user: no files today")) {
			t.Fatalf("journal of the rejected call: %v", a)
		}
	}
}
