package anthropic_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon/internal/model/modeltest"
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

// sendText streams a whole text answer.
func sendText(w http.ResponseWriter, pieces ...string) {
	s := modeltest.StartSSE(w)
	s.AnthropicStart(10)
	s.AnthropicText(0, pieces...)
	s.AnthropicEnd("end_turn", len(pieces))
}

// sendToolCall streams a short text, then one tool_use block.
func sendToolCall(w http.ResponseWriter, id, name string, pieces ...string) {
	s := modeltest.StartSSE(w)
	s.AnthropicStart(20)
	s.AnthropicText(0, "Checking.")
	s.AnthropicToolUse(1, id, name, pieces...)
	s.AnthropicEnd("tool_use", 7)
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
