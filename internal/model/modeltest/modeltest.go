// Package modeltest writes model answers in the real wire formats of the providers, for fake
// servers in tests: Server-Sent Events as the OpenAI Chat Completions API and the Anthropic
// Messages API stream them, and an in-memory network (Network) on which such a fake server
// runs inside a testing/synctest bubble. It is for tests only and holds no fake logic of its
// own.
package modeltest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// SSE writes Server-Sent Events to a response, flushing each one.
type SSE struct {
	W http.ResponseWriter
}

// StartSSE sends the headers of a streaming answer, at once, as the real servers do.
func StartSSE(w http.ResponseWriter) SSE {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	return SSE{w}
}

// Data sends one unnamed event (`data:` only) with v encoded as JSON, as OpenAI does.
func (s SSE) Data(v any) { s.Event("", v) }

// Event sends one event named name (none when empty) with v encoded as JSON.
func (s SSE) Event(name string, v any) {
	b, _ := json.Marshal(v)
	if name != "" {
		fmt.Fprintf(s.W, "event: %s\n", name)
	}
	fmt.Fprintf(s.W, "data: %s\n\n", b)
	s.W.(http.Flusher).Flush()
}

// Done sends OpenAI's terminating `data: [DONE]`.
func (s SSE) Done() {
	fmt.Fprint(s.W, "data: [DONE]\n\n")
	s.W.(http.Flusher).Flush()
}

// OpenAIChunk is a chat.completion.chunk with one choice.
func OpenAIChunk(delta map[string]any, finish any) map[string]any {
	return map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1700000000,
		"model": "gpt-test", "system_fingerprint": "fp_test",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
	}
}

// OpenAIUsage is the last chunk sent when stream_options.include_usage is set: no choices.
func OpenAIUsage(prompt, completion int) map[string]any {
	return map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1700000000,
		"model": "gpt-test", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
	}
}

// AnthropicStart opens a message with the given input token count.
func (s SSE) AnthropicStart(input int) {
	s.Event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_test", "type": "message", "role": "assistant", "content": []any{}, "model": "claude-test",
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": input, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1},
	}})
}

// AnthropicText sends a text block at index made of pieces, one text_delta each.
func (s SSE) AnthropicText(index int, pieces ...string) {
	s.AnthropicTextStart(index)
	s.Event("ping", map[string]any{"type": "ping"})
	for _, p := range pieces {
		s.AnthropicTextDelta(index, p)
	}
	s.Event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
}

// AnthropicTextStart opens an empty text block at index.
func (s SSE) AnthropicTextStart(index int) {
	s.Event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
		"content_block": map[string]any{"type": "text", "text": ""}})
}

// AnthropicTextDelta sends one text_delta of the block at index.
func (s SSE) AnthropicTextDelta(index int, text string) {
	s.Event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
		"delta": map[string]any{"type": "text_delta", "text": text}})
}

// AnthropicToolUse sends a tool_use block at index whose input JSON is split over
// input_json_delta events, starting with an empty one as the API does.
func (s SSE) AnthropicToolUse(index int, id, name string, pieces ...string) {
	s.AnthropicToolUseStart(index, id, name)
	for _, p := range append([]string{""}, pieces...) {
		s.AnthropicJSONDelta(index, p)
	}
	s.Event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
}

// AnthropicToolUseStart opens a tool_use block at index with an empty input.
func (s SSE) AnthropicToolUseStart(index int, id, name string) {
	s.Event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
		"content_block": map[string]any{"type": "tool_use", "id": id, "name": name, "input": map[string]any{}}})
}

// AnthropicJSONDelta sends one input_json_delta of the tool_use block at index.
func (s SSE) AnthropicJSONDelta(index int, partial string) {
	s.Event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
		"delta": map[string]any{"type": "input_json_delta", "partial_json": partial}})
}

// AnthropicEnd sends message_delta with the stop reason and output tokens, then message_stop.
func (s SSE) AnthropicEnd(stop string, output int) {
	s.Event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": output}})
	s.Event("message_stop", map[string]any{"type": "message_stop"})
}

// APIError answers with status, extra headers and a JSON error body.
func APIError(w http.ResponseWriter, status int, header map[string]string, body string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}
