package main

import (
	"bytes"
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

	"github.com/carryon-hub/carryon/internal/model/modeltest"
	"github.com/carryon-hub/carryon/internal/npmtest"
)

// historyModel is an OpenAI-compatible model server whose reply says the last user message and
// how many user messages it was sent: "You said: <text> (<n> user messages)", and the number of
// tool results when there are some ("(<n> user messages, <k> tool results)"). Offered a tool
// get_weather and asked about the weather, it calls the tool, and answers "The weather: " and
// the tool's result once it has it.
func historyModel(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": ""}, nil))
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" {
			s.Data(modeltest.OpenAIChunk(map[string]any{"content": "The weather: " + textOf(req.Messages[n-1].Content)}, nil))
			s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
			s.Done()
			return
		}
		users, results, last := 0, 0, ""
		for _, m := range req.Messages {
			switch m.Role {
			case "user":
				users, last = users+1, textOf(m.Content)
			case "tool":
				results++
			}
		}
		for _, tl := range req.Tools {
			if tl.Function.Name == "get_weather" && strings.Contains(last, "weather") {
				s.Data(modeltest.OpenAIChunk(map[string]any{"tool_calls": []any{map[string]any{
					"index": 0, "id": "call_w", "type": "function",
					"function": map[string]any{"name": "get_weather", "arguments": `{"city":"Oslo"}`},
				}}}, nil))
				s.Data(modeltest.OpenAIChunk(map[string]any{}, "tool_calls"))
				s.Done()
				return
			}
		}
		reply := fmt.Sprintf("You said: %s (%d user messages)", last, users)
		if results > 0 {
			reply = fmt.Sprintf("You said: %s (%d user messages, %d tool results)", last, users, results)
		}
		s.Data(modeltest.OpenAIChunk(map[string]any{"content": reply}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
		s.Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestAgentsSDKOnServe: the official Node packages (openai, @openai/agents, pinned in .ci/npm)
// run an agent against `carryon serve`: two turns with OpenAIConversationsSession (history in
// carryon, model calls to carryon's /v1/responses) and one with conversationId (carryon runs the
// agent on the conversation), then a turn with conversationId and a function tool the SDK runs
// (carryon's client-side tool: the SDK gets the call, runs it, and the run continues with its
// output). Then two turns in session mode with that function tool: the SDK's model call after
// the tool ran sends the history ending with the function_call and its function_call_output, and
// carryon's model continues after the output (issue 23). Every turn sees the turns before it.
func TestAgentsSDKOnServe(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		npmtest.Missing(t, "node is not on PATH")
	}
	npmtest.File(t, "@openai/agents/package.json")
	modules := filepath.Dir(filepath.Dir(npmtest.File(t, "openai/package.json"))) // .ci/npm/node_modules
	m := historyModel(t)
	data := t.TempDir()
	srv := startServerEnv(t, data, []string{"OPENAI_BASE_URL=" + m.URL + "/v1", "OPENAI_API_KEY=sk-test"}, "--provider", "openai", "--model", "gpt-test")
	key := localKey(t, data)
	cmd := exec.Command("node", filepath.Join("testdata", "agents-sdk", "agents.cjs"))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules,
		"CARRYON_URL="+srv.url, "CARRYON_KEY="+key, "OPENAI_AGENTS_DISABLE_TRACING=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the Agents SDK script: %v\n%s\nserver logs:\n%s", err, stderr.String(), srv.logs)
	}
	var out struct {
		Conversation         string
		First, Second, Third string
		Weather              string
		Calls                int
		SessionWeather       string
		SessionCalls         int
		SessionAfter         string
		Items                []struct{ Type, Role string }
		ToolItems            []struct{ Type, Role, Output string }
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("the script printed %q: %v", stdout.String(), err)
	}
	if out.First != "You said: My name is Ada. (1 user messages)" || out.Second != "You said: What is my name? (2 user messages)" {
		t.Fatalf("session turns = %q, %q", out.First, out.Second)
	}
	if out.Third != "You said: Say it once more. (3 user messages)" {
		t.Fatalf("the conversationId turn = %q: it did not see the first turns", out.Third)
	}
	if out.Weather != "The weather: sunny in Oslo" || out.Calls != 1 {
		t.Fatalf("the function tool turn = %q after %d calls of the tool", out.Weather, out.Calls)
	}
	if out.SessionWeather != "The weather: sunny in Oslo" || out.SessionCalls != 1 {
		t.Fatalf("the function tool turn in session mode = %q after %d calls of the tool", out.SessionWeather, out.SessionCalls)
	}
	if out.SessionAfter != "You said: Thank you. (2 user messages, 1 tool results)" {
		t.Fatalf("the turn after the tool in session mode = %q: it did not see the first turn and its tool result", out.SessionAfter)
	}
	// The SDK reads a function_call_output item back as its function_call_result.
	var kinds []string
	for _, it := range out.ToolItems {
		kinds = append(kinds, it.Type+"/"+it.Role)
	}
	if got := strings.Join(kinds, " "); got != "message/user function_call/ function_call_result/ message/assistant message/user message/assistant" || out.ToolItems[2].Output != "sunny in Oslo" {
		t.Fatalf("the tool session's items = %s (%+v)", got, out.ToolItems)
	}
	if len(out.Items) != 4 || out.Items[0].Role != "user" || out.Items[1].Role != "assistant" {
		t.Fatalf("the session's items = %+v", out.Items)
	}
	// The conversation is a session: the native API sees all three turns.
	msgs := must(t, srv.url, key, "GET", "/v1/sessions/"+out.Conversation+"/messages", nil, 200).json(t)["items"].([]any)
	var texts []string
	for _, raw := range msgs {
		texts = append(texts, raw.(map[string]any)["content"].(string))
	}
	if len(msgs) < 6 || !strings.Contains(texts[0], "Ada") || texts[5] != out.Third || texts[len(texts)-1] != out.Weather {
		t.Fatalf("the session's messages = %q", texts)
	}
}
