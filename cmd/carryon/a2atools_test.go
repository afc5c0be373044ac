package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/model/modeltest"
)

// a2aCallerModel is an OpenAI-compatible model for the calling server: a user message
// "TOOL: TEXT" makes it call TOOL with {"message": TEXT}; once the tool's result is in the
// conversation it answers "Done: " and the result.
func a2aCallerModel(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		json.Unmarshal(body, &req)
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": ""}, nil))
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			s.Data(modeltest.OpenAIChunk(map[string]any{"content": "Done: " + textOf(last.Content)}, nil))
			s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
			s.Done()
			return
		}
		name, text, _ := strings.Cut(textOf(last.Content), ": ")
		args, _ := json.Marshal(map[string]string{"message": text})
		s.Data(modeltest.OpenAIChunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": 0, "id": "call_a2a", "type": "function", "function": map[string]any{"name": name, "arguments": string(args)},
		}}}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "tool_calls"))
		s.Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// a2aRemoteAgents are the profiles of the server that plays the remote A2A agent: the default
// one (the scripted model: a task becomes a goal and a plan, "continue" goes on with it), one
// whose working-memory tool waits for approval (its tasks are input-required), one whose model
// cannot be reached (its tasks fail), and a slow one.
const a2aRemoteAgents = `
providers:
  offline: {kind: scripted}
  slowpoke: {kind: scripted, delay: 3s}
  dead: {kind: openai, base_url: "http://127.0.0.1:1/v1"}
agents:
  default: {provider: offline}
  asker: {provider: offline, tools: [update_working_memory], approval: {update_working_memory: always}}
  broken: {provider: dead}
  slow: {provider: slowpoke}
`

// TestA2AAgentsAsTools: a carryon server whose profile names remote A2A agents (another real
// carryon server, over its A2A JSON-RPC endpoint) as tools. A run's call of remote__send_message
// reaches the remote agent, its reply comes back to the calling run (its reply and its journal,
// where the call is unsafe), and the remote contextId is kept in the journal: a second call in
// the same session continues the remote conversation (the remote agent continues the task the
// first message gave it, in the same remote session), while another session starts a new one.
// A remote task that needs input, one that fails, and an agent that cannot be reached are tool
// errors the model sees, never a failed or hung run; `carryon agents check` names the
// unreachable card. A SIGKILL of the calling server in the middle of a remote call leaves its
// run, after the restart, waiting for a decision on that unsafe call, which is not sent again;
// a rerun sends it with the same messageId, and the remote agent applies it once.
func TestA2AAgentsAsTools(t *testing.T) {
	t.Parallel()
	remoteData := t.TempDir()
	remoteFile := filepath.Join(t.TempDir(), "remote.yaml")
	if err := os.WriteFile(remoteFile, []byte(a2aRemoteAgents), 0o600); err != nil {
		t.Fatal(err)
	}
	remote := startServer(t, remoteData, "--agents", remoteFile)
	remoteKey := localKey(t, remoteData)

	m := a2aCallerModel(t)
	file := filepath.Join(t.TempDir(), "agents.yaml")
	yaml := fmt.Sprintf(`providers:
  fake: {kind: openai, base_url: %q, api_key_env: FAKE_MODEL_KEY}
a2a_agents:
  remote: {url: %q, api_key_env: REMOTE_KEY, call_timeout: 2m}
  asker: {url: %q, api_key_env: REMOTE_KEY}
  broken: {url: %q, api_key_env: REMOTE_KEY}
  slow: {url: %q, api_key_env: REMOTE_KEY}
  gone: {url: "http://127.0.0.1:1/", call_timeout: 5s}
agents:
  default: {provider: fake, model: m, tools: ["remote__*", asker__send_message, broken__send_message, slow__send_message, gone__send_message]}
`, m.URL+"/v1", remote.url+"/", remote.url+"/a2a/asker", remote.url+"/a2a/broken/", remote.url+"/a2a/slow/")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"FAKE_MODEL_KEY=sk-fake", "REMOTE_KEY=" + remoteKey}
	data := t.TempDir()
	args := []string{"--agents", file, "--lease-ttl", "1s"}
	srv := startServerEnv(t, data, env, args...)
	key := localKey(t, data)

	turn := func(sid, msg string) (map[string]any, map[string]any) {
		t.Helper()
		runID := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": msg}, 202).json(t)["id"].(string)
		run := waitRun(t, srv, key, runID)
		acts := must(t, srv.url, key, "GET", "/v1/runs/"+runID+"/actions", nil, 200).json(t)["items"].([]any)
		if len(acts) != 1 {
			t.Fatalf("run %v: journal %v, want one call", run, acts)
		}
		return run, acts[0].(map[string]any)
	}
	newSession := func() string {
		return must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	}

	sid := newSession()
	r, a := turn(sid, "remote__send_message: Plan a trip to Oslo: book flights, find a hotel")
	fp, _ := a["fingerprint_after"].(string)
	if r["status"] != "succeeded" || !strings.Contains(r["reply"].(string), "Done: New task. Goal: Plan a trip to Oslo") ||
		a["tool"] != "remote__send_message" || a["effect"] != "unsafe" || a["status"] != "succeeded" || !strings.HasPrefix(fp, "a2a-context:sess_") {
		t.Fatalf("first call: run %v, action %v", r, a)
	}
	contextID := strings.TrimPrefix(fp, "a2a-context:")
	r, a = turn(sid, "remote__send_message: continue")
	if r["status"] != "succeeded" || !strings.Contains(r["reply"].(string), "Done: Continuing the task. Goal: Plan a trip to Oslo") ||
		a["fingerprint_before"] != fp || a["fingerprint_after"] != fp {
		t.Fatalf("second call: run %v, action %v; want the remote conversation %s continued", r, a, contextID)
	}
	if runs := must(t, remote.url, remoteKey, "GET", "/v1/sessions/"+contextID+"/runs", nil, 200).json(t)["items"].([]any); len(runs) != 2 {
		t.Fatalf("the remote session %s has %d runs, want 2", contextID, len(runs))
	}
	r, a = turn(newSession(), "remote__send_message: continue")
	if r["status"] != "succeeded" || !strings.Contains(r["reply"].(string), "There is no task") || a["fingerprint_before"] != nil || a["fingerprint_after"] == fp {
		t.Fatalf("another session's call: run %v, action %v; want a new remote conversation", r, a)
	}

	for _, c := range []struct{ msg, want string }{
		{"asker__send_message: Plan a trip to Bergen: pack", "A2A agent asker needs input this tool cannot give (task run_"},
		{"broken__send_message: hello", "A2A agent broken's task run_"},
		{"gone__send_message: hello", "A2A agent gone cannot be reached, nothing was sent: its agent card at http://127.0.0.1:1/.well-known/agent-card.json cannot be read"},
	} {
		r, a := turn(newSession(), c.msg)
		errText, _ := a["error"].(string)
		if r["status"] != "succeeded" || a["status"] != "failed" || !strings.Contains(errText, c.want) ||
			!strings.Contains(r["reply"].(string), "Done: error: "+c.want) {
			t.Errorf("%s: run %v, action %v; want a tool error containing %q that the model saw", c.msg, r, a, c.want)
		}
	}

	// A process of its own: the test process's HTTP transport checks answers against carryon's
	// OpenAPI document, which does not describe agent cards.
	check := exec.Command(binary, "agents", "check", file)
	check.Env = append(os.Environ(), env...)
	got, err := check.CombinedOutput()
	if err == nil || !strings.Contains(string(got), "A2A agent gone: its agent card at http://127.0.0.1:1/.well-known/agent-card.json cannot be read") ||
		strings.Contains(string(got), "A2A agent remote") {
		t.Errorf("agents check = %v:\n%s\nwant the unreachable card named, and only it", err, got)
	}

	// A kill -9 while the call is in flight: after the restart the unsafe call is not sent again.
	sid = newSession()
	runID := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "slow__send_message: Plan a long trip: step one, step two"}, 202).json(t)["id"].(string)
	if !within(time.Minute, func() bool {
		r, err := do(srv.url, key, "GET", "/v1/runs/"+runID+"/actions", nil)
		return err == nil && r.status == 200 && strings.Contains(string(r.body), `"status":"started"`)
	}) {
		t.Fatalf("the remote call did not start; logs:\n%s", srv.logs)
	}
	srv.kill()
	srv = startServerEnv(t, data, env, args...)
	r = waitRun(t, srv, key, runID)
	acts := must(t, srv.url, key, "GET", "/v1/runs/"+runID+"/actions", nil, 200).json(t)["items"].([]any)
	if a := acts[0].(map[string]any); r["status"] != "waiting_approval" || a["status"] != "started" || a["attempt"] != 1.0 {
		t.Fatalf("after the restart: run %v, journal %v; want waiting_approval on the cut-off call", r["status"], acts)
	}
	// rerun sends the message again with the same messageId: the remote agent applies it once
	// and answers the task the first send started.
	actionID := acts[0].(map[string]any)["id"].(string)
	must(t, srv.url, key, "POST", "/v1/runs/"+runID+"/approve", map[string]any{"action_id": actionID, "decision": "rerun"}, 200)
	r = waitRun(t, srv, key, runID)
	acts = must(t, srv.url, key, "GET", "/v1/runs/"+runID+"/actions", nil, 200).json(t)["items"].([]any)
	a = acts[0].(map[string]any)
	fp, _ = a["fingerprint_after"].(string)
	if r["status"] != "succeeded" || a["status"] != "succeeded" || !strings.Contains(r["reply"].(string), "Done: New task. Goal: Plan a long trip") || fp == "" {
		t.Fatalf("after rerun: run %v, action %v", r, a)
	}
	if runs := must(t, remote.url, remoteKey, "GET", "/v1/sessions/"+strings.TrimPrefix(fp, "a2a-context:")+"/runs", nil, 200).json(t)["items"].([]any); len(runs) != 1 {
		t.Fatalf("the message sent twice made %d remote tasks, want 1", len(runs))
	}
	made := 0
	for _, s := range must(t, remote.url, remoteKey, "GET", "/v1/sessions?limit=100", nil, 200).json(t)["items"].([]any) {
		if title, _ := s.(map[string]any)["title"].(string); strings.HasPrefix(title, "Plan a long trip") {
			made++
		}
	}
	if made != 1 {
		t.Fatalf("the message sent twice made %d remote conversations, want 1", made)
	}
}
