package engine_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/anthropic"
	"github.com/carryon-hub/carryon/internal/model/modeltest"
	"github.com/carryon-hub/carryon/internal/model/openai"
)

// fakeLLM is a model endpoint: each request body is recorded and handed, with its number (from
// 1), to the test's answer function.
type fakeLLM struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func newFakeLLM(t *testing.T, path string, answer func(n int, body []byte, w http.ResponseWriter)) *fakeLLM {
	t.Helper()
	f := &fakeLLM{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != path {
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read request: %v", err)
			return
		}
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		n := len(f.bodies)
		f.mu.Unlock()
		answer(n, body, w)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeLLM) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

func (f *fakeLLM) body(i int) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[i]
}

// view is a request body read back in provider-neutral terms.
type view struct {
	System string
	Tools  []string
	Msgs   []viewMsg
}

// viewMsg is one message of a request: a tool result has Role "tool" and ResultFor set.
type viewMsg struct {
	Role      string
	Text      string
	CallIDs   []string
	ResultFor string
}

// wire is one provider's wire format, as a fake server speaks it.
type wire struct {
	name, model, path string
	provider          func(url string) model.Provider
	// toolCall streams one tool call, its arguments split over pieces.
	toolCall func(w http.ResponseWriter, id, name string, pieces ...string)
	// text streams a text answer, one delta per piece.
	text func(w http.ResponseWriter, pieces ...string)
	// fail answers with an API error.
	fail func(w http.ResponseWriter, status int, header map[string]string)
	// read decodes a request body.
	read func(t *testing.T, body []byte) view
}

var wires = []wire{openaiWire, anthropicWire}

// The OpenAI Chat Completions format: data-only SSE of chat.completion.chunk, then [DONE].
var openaiWire = wire{
	name: "openai", model: "gpt-4o", path: "/v1/chat/completions",
	provider: func(url string) model.Provider {
		return openai.New(openai.Config{APIKey: "sk-test", BaseURL: url + "/v1"})
	},
	toolCall: func(w http.ResponseWriter, id, name string, pieces ...string) {
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"index": 0, "id": id, "type": "function", "function": map[string]any{"name": name, "arguments": ""},
		}}}, nil))
		for _, p := range pieces {
			s.Data(modeltest.OpenAIChunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": p}}}}, nil))
		}
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "tool_calls"))
		s.Data(modeltest.OpenAIUsage(20, 7))
		s.Done()
	},
	text: func(w http.ResponseWriter, pieces ...string) {
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": ""}, nil))
		for _, p := range pieces {
			s.Data(modeltest.OpenAIChunk(map[string]any{"content": p}, nil))
		}
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
		s.Data(modeltest.OpenAIUsage(10, len(pieces)))
		s.Done()
	},
	fail: func(w http.ResponseWriter, status int, header map[string]string) {
		modeltest.APIError(w, status, header, fmt.Sprintf(`{"error":{"message":"fake failure %d","type":"server_error","param":null,"code":null}}`, status))
	},
	read: func(t *testing.T, body []byte) view {
		var req struct {
			Messages []struct {
				Role       string `json:"role"`
				Content    any    `json:"content"`
				ToolCallID string `json:"tool_call_id"`
				ToolCalls  []struct {
					ID string `json:"id"`
				} `json:"tool_calls"`
			} `json:"messages"`
			Tools []struct {
				Function struct{ Name string } `json:"function"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Errorf("decode request: %v", err)
		}
		var v view
		for _, tl := range req.Tools {
			v.Tools = append(v.Tools, tl.Function.Name)
		}
		for _, m := range req.Messages {
			text, _ := m.Content.(string)
			if m.Role == "system" {
				v.System += text
				continue
			}
			vm := viewMsg{Role: m.Role, Text: text, ResultFor: m.ToolCallID}
			for _, c := range m.ToolCalls {
				vm.CallIDs = append(vm.CallIDs, c.ID)
			}
			v.Msgs = append(v.Msgs, vm)
		}
		return v
	},
}

// The Anthropic Messages format: named SSE events, text and tool_use content blocks.
var anthropicWire = wire{
	name: "anthropic", model: "claude-test", path: "/v1/messages",
	provider: func(url string) model.Provider {
		return anthropic.New(anthropic.Config{APIKey: "sk-ant-test", BaseURL: url})
	},
	toolCall: func(w http.ResponseWriter, id, name string, pieces ...string) {
		s := modeltest.StartSSE(w)
		s.AnthropicStart(20)
		s.AnthropicText(0, "Checking.")
		s.Event("content_block_start", map[string]any{"type": "content_block_start", "index": 1,
			"content_block": map[string]any{"type": "tool_use", "id": id, "name": name, "input": map[string]any{}}})
		for _, p := range append([]string{""}, pieces...) {
			s.Event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 1,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
		}
		s.Event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 1})
		s.AnthropicEnd("tool_use", 7)
	},
	text: func(w http.ResponseWriter, pieces ...string) {
		s := modeltest.StartSSE(w)
		s.AnthropicStart(10)
		s.AnthropicText(0, pieces...)
		s.AnthropicEnd("end_turn", len(pieces))
	},
	fail: func(w http.ResponseWriter, status int, header map[string]string) {
		kind := map[int]string{429: "rate_limit_error", 529: "overloaded_error"}[status]
		if kind == "" {
			kind = "api_error"
		}
		modeltest.APIError(w, status, header, fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":"fake failure %d"}}`, kind, status))
	},
	read: func(t *testing.T, body []byte) view {
		type block struct {
			Type      string `json:"type"`
			Text      string `json:"text"`
			ID        string `json:"id"`
			ToolUseID string `json:"tool_use_id"`
			Content   []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		var req struct {
			System   []struct{ Text string } `json:"system"`
			Tools    []struct{ Name string } `json:"tools"`
			Messages []struct {
				Role    string  `json:"role"`
				Content []block `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Errorf("decode request: %v", err)
		}
		var v view
		for _, s := range req.System {
			v.System += s.Text
		}
		for _, tl := range req.Tools {
			v.Tools = append(v.Tools, tl.Name)
		}
		for _, m := range req.Messages {
			vm := viewMsg{Role: m.Role}
			for _, b := range m.Content {
				switch b.Type {
				case "text":
					vm.Text += b.Text
				case "tool_use":
					vm.CallIDs = append(vm.CallIDs, b.ID)
				case "tool_result":
					r := viewMsg{Role: "tool", ResultFor: b.ToolUseID}
					for _, c := range b.Content {
						r.Text += c.Text
					}
					v.Msgs = append(v.Msgs, r)
				}
			}
			if vm.Text != "" || len(vm.CallIDs) > 0 {
				v.Msgs = append(v.Msgs, vm)
			}
		}
		return v
	},
}
