package anthropic_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// wireBlock is a content block of a request message.
type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   []wireBlock     `json:"content"`
}

// wireRequest is the part of a Messages API request body the fake server checks.
type wireRequest struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	Stream    bool   `json:"stream"`
	System    []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"system"`
	Messages []struct {
		Role    string      `json:"role"`
		Content []wireBlock `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	Temperature *float64 `json:"temperature"`
}

// fakeServer is a Messages API endpoint: each request is decoded and handed, with its number
// (from 1), to the test's answer function.
type fakeServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []wireRequest
	headers  []http.Header
}

// newFake starts a fake server; answer writes the response to the n-th request.
func newFake(t *testing.T, answer func(n int, req wireRequest, w http.ResponseWriter)) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		var req wireRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("decode request: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.requests = append(f.requests, req)
		f.headers = append(f.headers, r.Header.Clone())
		n := len(f.requests)
		f.mu.Unlock()
		answer(n, req, w)
	}))
	t.Cleanup(f.Close)
	return f
}

// count returns how many requests the server saw.
func (f *fakeServer) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// request returns the i-th request (from 0) and its headers.
func (f *fakeServer) request(i int) (wireRequest, http.Header) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[i], f.headers[i]
}

// sse writes Server-Sent Events the way the Messages API does: a named event and its data.
type sse struct {
	w http.ResponseWriter
}

// startSSE sends the headers of a streaming answer.
func startSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

// event sends one event whose data is v encoded as JSON, and flushes it.
func (s sse) event(name string, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	s.w.(http.Flusher).Flush()
}

// messageStart opens a message with the given input token count.
func (s sse) messageStart(input int) {
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_test", "type": "message", "role": "assistant", "content": []any{}, "model": "claude-test",
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": input, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1},
	}})
}

// textBlock sends a text block at index made of pieces, one text_delta each.
func (s sse) textBlock(index int, pieces ...string) {
	s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
		"content_block": map[string]any{"type": "text", "text": ""}})
	s.event("ping", map[string]any{"type": "ping"})
	for _, p := range pieces {
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "text_delta", "text": p}})
	}
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
}

// toolUseBlock sends a tool_use block at index whose input JSON is split over input_json_delta
// events, starting with an empty one as the API does.
func (s sse) toolUseBlock(index int, id, name string, pieces ...string) {
	s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
		"content_block": map[string]any{"type": "tool_use", "id": id, "name": name, "input": map[string]any{}}})
	for _, p := range append([]string{""}, pieces...) {
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
	}
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
}

// messageEnd sends message_delta with the stop reason and output tokens, then message_stop.
func (s sse) messageEnd(stop string, output int) {
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": output}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// sendText streams a whole text answer.
func sendText(w http.ResponseWriter, pieces ...string) {
	s := startSSE(w)
	s.messageStart(10)
	s.textBlock(0, pieces...)
	s.messageEnd("end_turn", len(pieces))
}

// sendToolCall streams a short text, then one tool_use block.
func sendToolCall(w http.ResponseWriter, id, name string, pieces ...string) {
	s := startSSE(w)
	s.messageStart(20)
	s.textBlock(0, "Checking.")
	s.toolUseBlock(1, id, name, pieces...)
	s.messageEnd("tool_use", 7)
}

// sendError answers with an API error body and status.
func sendError(w http.ResponseWriter, status int, kind string, header map[string]string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_test")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":"fake failure %d"},"request_id":"req_test"}`, kind, status)
}
