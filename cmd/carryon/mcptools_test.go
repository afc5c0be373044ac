package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/model/modeltest"
)

// mcpModel is an OpenAI-compatible model server whose answer depends on the model a profile
// names: "echo" calls the reference MCP server's echo tool, "slow-unsafe" and "slow-read" its
// long-running operation (30 s and 4 s); once a tool result is in the conversation it answers
// "Done: " and the result.
func mcpModel(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		json.Unmarshal(body, &req)
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": ""}, nil))
		if last := len(req.Messages) - 1; last >= 0 && req.Messages[last].Role == "tool" {
			s.Data(modeltest.OpenAIChunk(map[string]any{"content": "Done: " + textOf(req.Messages[last].Content)}, nil))
			s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
			s.Done()
			return
		}
		name, args := "everything__echo", `{"message":"hello from carryon"}`
		switch req.Model {
		case "slow-unsafe":
			name, args = "everything__trigger-long-running-operation", `{"duration":30,"steps":3}`
		case "slow-read":
			name, args = "everything__trigger-long-running-operation", `{"duration":4,"steps":2}`
		}
		s.Data(modeltest.OpenAIChunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": 0, "id": "call_mcp", "type": "function", "function": map[string]any{"name": name, "arguments": args},
		}}}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "tool_calls"))
		s.Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// mcpAgents writes an agents file whose profiles use the reference MCP server over stdio.
func mcpAgents(t *testing.T, modelURL, bin string) string {
	file := filepath.Join(t.TempDir(), "agents.yaml")
	yaml := fmt.Sprintf(`providers:
  fake: {kind: openai, base_url: %q, api_key_env: FAKE_MODEL_KEY}
mcp_servers:
  everything: {command: [%q], call_timeout: 2m}
agents:
  default: {provider: fake, model: echo, tools: ["everything__*", update_working_memory]}
  slow: {provider: fake, model: slow-unsafe, tools: ["everything__*"]}
  slowread:
    provider: fake
    model: slow-read
    tools: ["everything__*"]
    effects: {everything__trigger-long-running-operation: read}
`, modelURL+"/v1", bin)
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestMCPToolsInRuns: with a real MCP server nobody here wrote (the reference server, over
// stdio), a run calls one of its tools: the journal, the reply and the context show it. A server
// killed (SIGKILL) while an unsafe MCP call is in flight leaves, after its restart, the run
// waiting for a decision on that call, which is not run again; a read-only one is run again and
// the run finishes.
func TestMCPToolsInRuns(t *testing.T) {
	t.Parallel()
	bin := npmBin(t, "mcp-server-everything")
	m := mcpModel(t)
	file := mcpAgents(t, m.URL, bin)
	env := []string{"FAKE_MODEL_KEY=sk-fake"}
	data := t.TempDir()
	args := []string{"--agents", file, "--lease-ttl", "1s"}
	srv := startServerEnv(t, data, env, args...)
	key := localKey(t, data)

	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	runID := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "Say hello through the echo tool"}, 202).json(t)["id"].(string)
	run := waitRun(t, srv, key, runID)
	if run["status"] != "succeeded" || !strings.Contains(run["reply"].(string), "Echo: hello from carryon") {
		t.Fatalf("run = %v", run)
	}
	acts := must(t, srv.url, key, "GET", "/v1/runs/"+runID+"/actions", nil, 200).json(t)["items"].([]any)
	if a := acts[0].(map[string]any); len(acts) != 1 || a["tool"] != "everything__echo" || a["status"] != "succeeded" || a["effect"] != "unsafe" ||
		!strings.Contains(a["result"].(string), "Echo: hello from carryon") {
		t.Fatalf("journal = %v", acts)
	}
	ctxView := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/context", nil, 200).json(t)
	if !strings.Contains(ctxView["system"].(string), "everything__echo") {
		t.Fatalf("the context's tool digest does not show the MCP call:\n%s", ctxView["system"])
	}

	// Kill the server while each profile's long call is in flight.
	start := func(agent string) (string, string) {
		t.Helper()
		sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"agent": agent}, 201).json(t)["id"].(string)
		runID := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "Run the long operation"}, 202).json(t)["id"].(string)
		return sid, runID
	}
	started := func(runID string) bool {
		r, err := do(srv.url, key, "GET", "/v1/runs/"+runID+"/actions", nil)
		return err == nil && r.status == 200 && strings.Contains(string(r.body), `"status":"started"`)
	}
	_, unsafeRun := start("slow")
	if !within(time.Minute, func() bool { return started(unsafeRun) }) {
		t.Fatalf("the unsafe MCP call did not start; logs:\n%s", srv.logs)
	}
	srv.kill()
	srv = startServerEnv(t, data, env, args...)
	run = waitRun(t, srv, key, unsafeRun)
	acts = must(t, srv.url, key, "GET", "/v1/runs/"+unsafeRun+"/actions", nil, 200).json(t)["items"].([]any)
	if a := acts[0].(map[string]any); run["status"] != "waiting_approval" || a["status"] != "started" || a["attempt"] != 1.0 {
		t.Fatalf("after the restart: run %v, journal %v; want waiting_approval on the cut-off call, not run again", run["status"], acts)
	}

	_, readRun := start("slowread")
	if !within(time.Minute, func() bool { return started(readRun) }) {
		t.Fatalf("the read-only MCP call did not start; logs:\n%s", srv.logs)
	}
	srv.kill()
	srv = startServerEnv(t, data, env, args...)
	run = waitRun(t, srv, key, readRun)
	acts = must(t, srv.url, key, "GET", "/v1/runs/"+readRun+"/actions", nil, 200).json(t)["items"].([]any)
	if a := acts[0].(map[string]any); run["status"] != "succeeded" || a["status"] != "succeeded" || a["attempt"] != 2.0 ||
		!strings.Contains(run["reply"].(string), "Long running operation completed") {
		t.Fatalf("after the restart: run %v, journal %v; want the read-only call run again and the run done", run, acts)
	}
}
