package openai_test

import (
	"net/http"
	"testing"

	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/modeltest"
	"github.com/carryon-hub/carryon/internal/model/openai"
)

// chatWire writes Chat Completions chunks for the shared suites.
type chatWire struct{}

func (chatWire) Text(s modeltest.SSE) {}

func (chatWire) TextDelta(s modeltest.SSE, piece string) {
	s.Data(modeltest.OpenAIChunk(map[string]any{"content": piece}, nil))
}

func (chatWire) TextEnd(s modeltest.SSE, input, output int) {
	s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
	s.Data(modeltest.OpenAIUsage(input, output))
	s.Done()
}

func (chatWire) Tool(s modeltest.SSE, id, name, args string) {
	s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
		"index": 0, "id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args},
	}}}, nil))
}

func (chatWire) ToolDelta(s modeltest.SSE, piece string) {
	s.Data(modeltest.OpenAIChunk(map[string]any{"tool_calls": []any{map[string]any{
		"index": 0, "function": map[string]any{"arguments": piece},
	}}}, nil))
}

func (chatWire) ToolEnd(s modeltest.SSE) {
	s.Data(modeltest.OpenAIChunk(map[string]any{}, "tool_calls"))
	s.Done()
}

var streaming = modeltest.Streaming{Wire: chatWire{}, New: func(baseURL string, hc *http.Client) model.Provider {
	return openai.New(openai.Config{APIKey: "sk-test", BaseURL: baseURL + "/v1", Model: "gpt-test", HTTPClient: hc})
}}

// TestConformance: the provider contract (modeltest.TestConformance) over the Chat Completions
// wire.
func TestConformance(t *testing.T) {
	t.Parallel()
	modeltest.TestConformance(t, modeltest.Served(streaming))
}

// TestLimits: the shared limit suite (modeltest.TestLimits) over the Chat Completions wire.
func TestLimits(t *testing.T) {
	t.Parallel()
	modeltest.TestLimits(t, streaming)
}
