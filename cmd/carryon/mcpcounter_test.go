package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/model/modeltest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// counterServerEnv makes the test binary a stdio MCP server (serveCounter) instead of the tests,
// so that a real MCP server process is at hand without Node.js.
const counterServerEnv = "CARRYON_TEST_MCP_COUNTER"

// serveCounter serves over stdin/stdout the tools bump (adds one to the count kept in the file
// $CARRYON_TEST_MCP_COUNTER and answers the new count) and peek (answers the count).
func serveCounter() int {
	file := os.Getenv(counterServerEnv)
	count := func() int {
		b, _ := os.ReadFile(file)
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return n
	}
	answer := func(n int) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "count " + strconv.Itoa(n)}}}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "counter", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "bump", Description: "Adds one to the count.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := count() + 1
			if err := os.WriteFile(file, []byte(strconv.Itoa(n)), 0o600); err != nil {
				return nil, err
			}
			return answer(n), nil
		})
	s.AddTool(&mcp.Tool{Name: "peek", Description: "Says the count.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return answer(count()), nil })
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "counter server:", err)
		return 1
	}
	return 0
}

// counterMCP returns the mcp_servers entry of the counter server (this test binary) keeping its
// count in the file count, and reads that count (0 before any bump).
func counterMCP(t *testing.T, count string) (entry string, read func() int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	entry = fmt.Sprintf("counter: {command: [%q], env: {%s: %q}}", exe, counterServerEnv, count)
	return entry, func() int {
		b, err := os.ReadFile(count)
		if os.IsNotExist(err) {
			return 0
		} else if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(string(b))
		return n
	}
}

// toolModel is an OpenAI-compatible model server that calls the tool its model is named after
// (with no arguments) and, once a tool result is in the conversation, answers "Done: " and it.
func toolModel(t *testing.T) *httptest.Server {
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
		s.Data(modeltest.OpenAIChunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": 0, "id": "call_1", "type": "function", "function": map[string]any{"name": req.Model, "arguments": "{}"},
		}}}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "tool_calls"))
		s.Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestMCPRuleKeyTypoFailsTheRun: with a real MCP server (this binary over stdio, started on the
// first run's need), a profile whose approval names counter__bmup (a typo of counter__bump) or
// whose effects name counter__peak does not run the tool with the default rule: the run fails
// before any call, its error names the file, the line, the key and the nearest tool, and the
// server logs it at ERROR. The same server under a profile whose key is right waits for the
// approval, and bumps once approved.
func TestMCPRuleKeyTypoFailsTheRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	entry, count := counterMCP(t, dir+"/count")
	m := toolModel(t)
	file := writeFile(t, dir, "agents.yaml", fmt.Sprintf(`providers:
  fake: {kind: openai, base_url: %q, api_key_env: FAKE_MODEL_KEY}
mcp_servers:
  %s
agents:
  default:
    provider: fake
    model: counter__bump
    tools: ["counter__*"]
    approval: {counter__bump: always}
  typo:
    provider: fake
    model: counter__bump
    tools: ["counter__*"]
    approval: {counter__bmup: always}
  peak:
    provider: fake
    model: counter__peek
    tools: ["counter__*"]
    effects: {counter__peak: read}
`, m.URL+"/v1", entry))
	data := t.TempDir()
	srv := startServerEnv(t, data, []string{"FAKE_MODEL_KEY=sk-fake"}, "--agents", file)
	key := localKey(t, data)
	start := func(agent string) (string, map[string]any) {
		t.Helper()
		sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"agent": agent}, 201).json(t)["id"].(string)
		runID := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "count"}, 202).json(t)["id"].(string)
		return runID, waitRun(t, srv, key, runID)
	}
	actions := func(runID string) []any {
		return must(t, srv.url, key, "GET", "/v1/runs/"+runID+"/actions", nil, 200).json(t)["items"].([]any)
	}

	for _, c := range []struct{ agent, key, want string }{
		{"typo", "approval.counter__bmup", file + ":15: agents.typo.approval.counter__bmup: the agent's tools do not include counter__bmup: MCP server counter lists no such tool (nearest: counter__bump)"},
		{"peak", "effects.counter__peak", file + ":20: agents.peak.effects.counter__peak: the agent's tools do not include counter__peak: MCP server counter lists no such tool (nearest: counter__peek)"},
	} {
		runID, run := start(c.agent)
		if msg, _ := run["error"].(string); run["status"] != "failed" || !strings.Contains(msg, c.want) {
			t.Fatalf("%s's run: %v\nwant it failed with %q", c.agent, run, c.want)
		}
		if acts := actions(runID); len(acts) != 0 || count() != 0 {
			t.Fatalf("%s's run called a tool: journal %v, count %d", c.agent, acts, count())
		}
		if !within(10*time.Second, func() bool {
			for _, line := range strings.Split(srv.logs.String(), "\n") {
				if strings.Contains(line, "level=ERROR") && strings.Contains(line, "agent="+c.agent) && strings.Contains(line, c.key) {
					return true
				}
			}
			return false
		}) {
			t.Fatalf("the server did not log %s's %s at ERROR:\n%s", c.agent, c.key, srv.logs)
		}
	}

	runID, run := start("default")
	acts := actions(runID)
	if run["status"] != "waiting_approval" || len(acts) != 1 || count() != 0 {
		t.Fatalf("the right key: run %v, journal %v, count %d; want it waiting for approval", run, acts, count())
	}
	if a := acts[0].(map[string]any); a["tool"] != "counter__bump" || a["approval"] != "required" || a["status"] != "waiting" {
		t.Fatalf("the waiting call: %v", a)
	}
	must(t, srv.url, key, "POST", "/v1/runs/"+runID+"/approve", map[string]any{"action_id": acts[0].(map[string]any)["id"], "decision": "approve"}, 200)
	if run := waitRun(t, srv, key, runID); run["status"] != "succeeded" || run["reply"] != "Done: count 1" || count() != 1 {
		t.Fatalf("after the approval: run %v, count %d", run, count())
	}
}
