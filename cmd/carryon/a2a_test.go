package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/npmtest"
)

// a2aAgentsFile has the profiles of the A2A test: the default one, a writer whose write_file
// waits for approval before every call, and a slow one (a second per model step), whose task
// outlives a kill.
const a2aAgentsFile = `
providers:
  offline: {kind: scripted}
  slowpoke: {kind: scripted, delay: 1s}
agents:
  default: {provider: offline}
  writer:
    provider: offline
    tools: [write_file]
    approval: {write_file: always}
  slow: {provider: slowpoke}
`

// runA2AScript runs testdata/a2a/a2a.mjs against the server with args and decodes what it prints.
func runA2AScript(t *testing.T, client string, srv *server, key string, out any, args ...string) {
	t.Helper()
	cmd := exec.Command("node", append([]string{filepath.Join("testdata", "a2a", "a2a.mjs")}, args...)...)
	cmd.Env = append(os.Environ(), "A2A_CLIENT="+client, "CARRYON_URL="+srv.url, "CARRYON_KEY="+key)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("a2a.mjs %v: %v\n%s\nserver logs:\n%s", args, err, stderr.String(), srv.logs)
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("a2a.mjs %v printed %q: %v", args, stdout.String(), err)
	}
}

// TestA2ASDKOnServe: the official A2A JavaScript SDK (@a2a-js/sdk 1.3.0, pinned in .ci/npm)
// against `carryon serve`: it reads the default profile's agent card without a key, sends a
// message (a new context), continues that contextId (the same session: its second message sees
// the first), streams a third message (task, status and artifact events, ending completed with
// the whole reply), gets a task, and gets the spec's TaskNotFoundError for an unknown one. With
// the writer profile (its card found at /a2a/writer/), a tool marked approval: always makes the
// task input-required; a message "approve" on that taskId completes it and the tool wrote its
// file; "reject" on another completes without writing. Then a task of the slow profile started
// with returnImmediately outlives a SIGKILL of the server: after the restart, the SDK's
// resubscribeTask follows it from the stored events to completed, and the reply it builds from
// the snapshot and the chunks alone (not the last update, which repeats the whole reply) is the
// run's whole reply: no gap.
func TestA2ASDKOnServe(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		npmtest.Missing(t, "node is not on PATH")
	}
	client := npmtest.File(t, "@a2a-js/sdk/dist/client/index.js")
	data := t.TempDir()
	file := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(file, []byte(a2aAgentsFile), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, data, "--agents", file, "--lease-ttl", "2s")
	key := localKey(t, data)

	type task struct {
		ID, ContextID, Reply, Prompt string
		State                        int
	}
	var out struct {
		Card struct {
			Name, URL string
			Streaming bool
			Schemes   []string
		}
		First, Second, Got, Ask, Approved task
		Stream                            struct {
			Kinds                            []string
			State                            int
			Reply, Chunks, TaskID, ContextID string
		}
		Missing  string
		Rejected struct {
			AskState, State int
			ID              string
		}
	}
	runA2AScript(t, client, srv, key, &out, "main")
	const completed, inputRequired = 3, 6
	if out.Card.Name != "default" || out.Card.URL != srv.url+"/a2a" || !out.Card.Streaming || len(out.Card.Schemes) != 1 || out.Card.Schemes[0] != "bearer" {
		t.Fatalf("card = %+v", out.Card)
	}
	if out.First.State != completed || out.First.ContextID == "" || !strings.Contains(out.First.Reply, "My name is Ada") {
		t.Fatalf("first send = %+v", out.First)
	}
	if out.Second.ContextID != out.First.ContextID || out.Second.ID == out.First.ID || out.Second.State != completed {
		t.Fatalf("second send = %+v, first %+v: want a new task in the same context", out.Second, out.First)
	}
	msgs := must(t, srv.url, key, "GET", "/v1/sessions/"+out.First.ContextID+"/messages", nil, 200).json(t)
	var users []string
	for _, m := range msgs["items"].([]any) {
		if mm := m.(map[string]any); mm["role"] == "user" {
			users = append(users, mm["content"].(string))
		}
	}
	if len(users) != 3 || users[0] != "My name is Ada." || users[1] != "What is my name?" || users[2] != "Stream this, please." {
		t.Fatalf("the context's user messages = %q; want the three sends in order", users)
	}
	run := must(t, srv.url, key, "GET", "/v1/runs/"+out.Stream.TaskID, nil, 200).json(t)
	if k := out.Stream.Kinds; len(k) < 3 || k[0] != "task" || k[len(k)-1] != "statusUpdate" || !contains(k, "artifactUpdate") ||
		out.Stream.State != completed || out.Stream.ContextID != out.First.ContextID || out.Stream.Reply != run["reply"] || out.Stream.Chunks != run["reply"] {
		t.Fatalf("stream = %+v; the run's reply %q", out.Stream, run["reply"])
	}
	if out.Got.ID != out.First.ID || out.Got.State != completed || out.Got.Reply != out.First.Reply {
		t.Fatalf("getTask = %+v, want %+v", out.Got, out.First)
	}
	if out.Missing != "TaskNotFoundError" {
		t.Fatalf("getTask of an unknown id threw %q", out.Missing)
	}
	if out.Ask.State != inputRequired || !strings.Contains(out.Ask.Prompt, "write_file") || !strings.Contains(out.Ask.Prompt, "approve") {
		t.Fatalf("the write's task = %+v, want input-required naming the tool", out.Ask)
	}
	if out.Approved.ID != out.Ask.ID || out.Approved.State != completed {
		t.Fatalf("after approve = %+v", out.Approved)
	}
	acts := must(t, srv.url, key, "GET", "/v1/runs/"+out.Ask.ID+"/actions", nil, 200).json(t)
	items := acts["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["status"] != "succeeded" || items[0].(map[string]any)["approval"] != "approved" {
		t.Fatalf("the approved task's journal = %v", acts)
	}
	if out.Rejected.AskState != inputRequired || out.Rejected.State != completed {
		t.Fatalf("reject = %+v", out.Rejected)
	}
	acts = must(t, srv.url, key, "GET", "/v1/runs/"+out.Rejected.ID+"/actions", nil, 200).json(t)
	if items := acts["items"].([]any); len(items) != 1 || items[0].(map[string]any)["approval"] != "rejected" {
		t.Fatalf("the rejected task's journal = %v", acts)
	}

	// A task outlives a SIGKILL; the resubscription after the restart has all of it.
	var started struct{ Task task }
	runA2AScript(t, client, srv, key, &started, "start-slow")
	if started.Task.ID == "" || started.Task.State == completed {
		t.Fatalf("the slow task = %+v, want one that has not ended", started.Task)
	}
	srv.kill()
	srv = startServer(t, data, "--agents", file, "--lease-ttl", "2s")
	var again struct {
		Resubscribed struct {
			Kinds         []string
			State         int
			Reply, Chunks string
			TaskID        string
		}
	}
	runA2AScript(t, client, srv, key, &again, "resubscribe", started.Task.ID)
	run = must(t, srv.url, key, "GET", "/v1/runs/"+started.Task.ID, nil, 200).json(t)
	r := again.Resubscribed
	if r.TaskID != started.Task.ID || r.State != completed || r.Reply == "" || r.Reply != run["reply"] || r.Chunks != run["reply"] || r.Kinds[0] != "task" {
		t.Fatalf("resubscribed after the kill = %+v; the run is %v %q", r, run["status"], run["reply"])
	}
	if run["attempt"].(float64) < 2 {
		t.Fatalf("the run ran in one attempt (%v): the kill did not cut it, so the resubscription proved nothing about a restart", run["attempt"])
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
