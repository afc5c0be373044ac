package anthropic_test

import (
	"net/http"
	"testing"

	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/anthropic"
	"github.com/carryon-hub/carryon/internal/model/modeltest"
)

// messagesWire writes Messages API events for the shared suites.
type messagesWire struct{}

func (messagesWire) Text(s modeltest.SSE) {
	s.AnthropicStart(10)
	s.AnthropicTextStart(0)
}

func (messagesWire) TextDelta(s modeltest.SSE, piece string) { s.AnthropicTextDelta(0, piece) }

func (messagesWire) TextEnd(s modeltest.SSE, input, output int) {
	s.Event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	s.AnthropicEnd("end_turn", output)
}

func (messagesWire) Tool(s modeltest.SSE, id, name, args string) {
	s.AnthropicStart(10)
	s.AnthropicToolUseStart(0, id, name)
	s.AnthropicJSONDelta(0, args)
}

func (messagesWire) ToolDelta(s modeltest.SSE, piece string) { s.AnthropicJSONDelta(0, piece) }

func (messagesWire) ToolEnd(s modeltest.SSE) {
	s.Event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	s.AnthropicEnd("tool_use", 12)
}

var streaming = modeltest.Streaming{Wire: messagesWire{}, New: func(baseURL string, hc *http.Client) model.Provider {
	return anthropic.New(anthropic.Config{APIKey: "sk-ant-test", BaseURL: baseURL, Model: "claude-test", HTTPClient: hc})
}}

// TestConformance: the provider contract (modeltest.TestConformance) over the Messages API wire.
func TestConformance(t *testing.T) {
	t.Parallel()
	modeltest.TestConformance(t, modeltest.Served(streaming))
}

// TestLimits: the shared limit suite (modeltest.TestLimits) over the Messages API wire.
func TestLimits(t *testing.T) {
	t.Parallel()
	modeltest.TestLimits(t, streaming)
}
