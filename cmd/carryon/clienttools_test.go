package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon/internal/model/modeltest"
)

// weatherModel is an OpenAI-compatible model server that calls the client tool get_weather and,
// once the tool's result is in the conversation, answers with it. It keeps the tools each request
// offered.
type weatherModel struct {
	*httptest.Server
	mu    sync.Mutex
	tools [][]string
}

func newWeatherModel(t *testing.T) *weatherModel {
	m := &weatherModel{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
			Tools []struct {
				Function struct{ Name string } `json:"function"`
			} `json:"tools"`
		}
		json.Unmarshal(body, &req)
		var names []string
		for _, tl := range req.Tools {
			names = append(names, tl.Function.Name)
		}
		m.mu.Lock()
		m.tools = append(m.tools, names)
		m.mu.Unlock()
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": ""}, nil))
		if last := len(req.Messages) - 1; last >= 0 && req.Messages[last].Role == "tool" {
			s.Data(modeltest.OpenAIChunk(map[string]any{"content": "The weather: " + textOf(req.Messages[last].Content)}, nil))
			s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
			s.Done()
			return
		}
		s.Data(modeltest.OpenAIChunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": 0, "id": "call_w", "type": "function",
			"function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`},
		}}}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "tool_calls"))
		s.Done()
	}))
	t.Cleanup(m.Close)
	return m
}

// textOf is a chat message's content as text: a string, or the text parts of an array.
func textOf(c any) string {
	switch v := c.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, p := range v {
			if m, ok := p.(map[string]any); ok {
				b.WriteString(textOf(m["text"]))
			}
		}
		return b.String()
	}
	return ""
}

// TestClientToolsAcrossRestart: over HTTP on a real server with an OpenAI-compatible model, a run
// with a client tool stops in requires_action; the server is killed (SIGKILL) and restarted; the
// client posts the output (another user gets 404, a repeat with the same Idempotency-Key replays)
// and the run finishes with the output in its reply.
func TestClientToolsAcrossRestart(t *testing.T) {
	t.Parallel()
	m := newWeatherModel(t)
	env := []string{"OPENAI_BASE_URL=" + m.URL + "/v1", "OPENAI_API_KEY=sk-test"}
	args := []string{"--provider", "openai", "--model", "gpt-test"}
	data := t.TempDir()
	srv := startServerEnv(t, data, env, args...)
	key := localKey(t, data)
	bob := addUser(t, data, "bob")
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	tools := []any{map[string]any{"name": "get_weather", "description": "The weather in a city.",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}
	must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "Weather?", "tools": []any{map[string]any{"name": "bad name"}}}, 400)
	runID := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "Weather in Paris?", "tools": tools}, 202).json(t)["id"].(string)
	run := waitRun(t, srv, key, runID)
	if run["status"] != "requires_action" {
		t.Fatalf("run = %v, want requires_action", run)
	}
	calls := run["required_action"].(map[string]any)["tool_calls"].([]any)
	if len(calls) != 1 || calls[0].(map[string]any)["call_id"] != "call_w" || calls[0].(map[string]any)["name"] != "get_weather" {
		t.Fatalf("required_action = %v", run["required_action"])
	}
	m.mu.Lock()
	offered := strings.Join(m.tools[0], ",")
	m.mu.Unlock()
	if !strings.Contains(offered, "get_weather") || !strings.Contains(offered, "write_file") {
		t.Fatalf("the model was offered %s, want the client tool beside the server's", offered)
	}

	srv.kill()
	srv = startServerEnv(t, data, env, args...)
	if got := must(t, srv.url, key, "GET", "/v1/runs/"+runID, nil, 200).json(t); got["status"] != "requires_action" || got["required_action"] == nil {
		t.Fatalf("after the restart the run is %v", got)
	}
	outputs := map[string]any{"outputs": []any{map[string]any{"call_id": "call_w", "output": "sunny, 21 °C"}}}
	must(t, srv.url, bob, "POST", "/v1/runs/"+runID+"/tool_outputs", outputs, 404)
	must(t, srv.url, key, "POST", "/v1/runs/"+runID+"/tool_outputs", map[string]any{"outputs": []any{map[string]any{"call_id": "call_x", "output": "?"}}}, 400)
	first := must(t, srv.url, key, "POST", "/v1/runs/"+runID+"/tool_outputs", outputs, 200, "Idempotency-Key: out-1")
	again := must(t, srv.url, key, "POST", "/v1/runs/"+runID+"/tool_outputs", outputs, 200, "Idempotency-Key: out-1")
	if again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(first.body) {
		t.Fatalf("the repeat was not a replay: %s %s", again.header, again.body)
	}
	run = waitRun(t, srv, key, runID)
	if run["status"] != "succeeded" || run["reply"] != "The weather: sunny, 21 °C" {
		t.Fatalf("run = %v", run)
	}
	must(t, srv.url, key, "POST", "/v1/runs/"+runID+"/tool_outputs", outputs, 409)
}

// TestChatClientTools: `carryon chat --tools FILE` shows the client tool call the model made,
// reads its output from the next line and the run goes on with it.
func TestChatClientTools(t *testing.T) {
	t.Parallel()
	m := newWeatherModel(t)
	env := []string{"OPENAI_BASE_URL=" + m.URL + "/v1", "OPENAI_API_KEY=sk-test"}
	srv := startServerEnv(t, t.TempDir(), env, "--provider", "openai", "--model", "gpt-test")
	file := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(file, []byte(`[{"name":"get_weather","description":"The weather in a city.","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := cliRun(context.Background(), srv, strings.NewReader("Weather in Paris?\nsunny, 21 °C\n"), nil, "chat", "--tools", file)
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, out)
	}
	for _, want := range []string{
		"client tool get_weather(city=\"Paris\") waits for its output [call_w]",
		"output of get_weather [call_w]> sunny, 21 °C",
		"The weather: sunny, 21 °C",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("chat output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Fatalf("output:\n%s", out)
	}
	if out, err := cliRun(context.Background(), srv, nil, nil, "chat", "--tools", filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Fatalf("chat with a missing tools file: %s", out)
	}
}
