package openai_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon/internal/model/modeltest"
)

// wireRequest is the part of a chat completion request body the fake server checks.
type wireRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           *int     `json:"max_tokens"`
	MaxCompletionTokens *int     `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
}

// fakeServer is an OpenAI-compatible endpoint: each request is decoded and handed, with its
// number (from 1), to the test's answer function.
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
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
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

// sendText streams text as one delta per piece, then finish "stop", usage and [DONE].
func sendText(w http.ResponseWriter, pieces ...string) {
	s := modeltest.StartSSE(w)
	s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, p := range pieces {
		s.Data(modeltest.OpenAIChunk(map[string]any{"content": p}, nil))
	}
	s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
	s.Data(modeltest.OpenAIUsage(10, len(pieces)))
	s.Done()
}

// sendToolCall streams one tool call the way OpenAI does: id, type and name in the first
// fragment, the arguments split over the following ones.
func sendToolCall(w http.ResponseWriter, id, name string, argPieces ...string) {
	s := modeltest.StartSSE(w)
	s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
		"index": 0, "id": id, "type": "function", "function": map[string]any{"name": name, "arguments": ""},
	}}}, nil))
	for _, p := range argPieces {
		s.Data(modeltest.OpenAIChunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": 0, "function": map[string]any{"arguments": p},
		}}}, nil))
	}
	s.Data(modeltest.OpenAIChunk(map[string]any{}, "tool_calls"))
	s.Data(modeltest.OpenAIUsage(20, 7))
	s.Done()
}

// sendError answers with an API error body and status.
func sendError(w http.ResponseWriter, status int, header map[string]string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":"fake failure %d","type":"test_error","param":null,"code":null}}`, status)
}

// request returns the i-th request (from 0) and its headers.
func (f *fakeServer) request(i int) (wireRequest, http.Header) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[i], f.headers[i]
}
