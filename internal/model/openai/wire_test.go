package openai_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/modeltest"
	"github.com/carryon-hub/carryon/internal/model/openai"
)

// TestParallelToolCalls checks that fragments of two calls interleaved by index are assembled
// into two complete calls, in index order.
func TestParallelToolCalls(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) {
		s := modeltest.StartSSE(w)
		call := func(i int, id, name, args string) map[string]any {
			fn := map[string]any{"arguments": args}
			c := map[string]any{"index": i, "function": fn}
			if id != "" {
				c["id"], c["type"], fn["name"] = id, "function", name
			}
			return modeltest.OpenAIChunk(map[string]any{"tool_calls": []any{c}}, nil)
		}
		s.Data(call(0, "call_a", "read", ""))
		s.Data(call(1, "call_b", "list", ""))
		s.Data(call(0, "", "", `{"path":`))
		s.Data(call(1, "", "", `{}`))
		s.Data(call(0, "", "", `"x.txt"}`))
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "tool_calls"))
		s.Done()
	})
	resp, err := model.Collect(provider(f).Stream(context.Background(), model.Request{Messages: []model.Message{{Role: "user", Content: "go"}}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 {
		t.Fatalf("tool calls = %+v, want 2", resp.ToolCalls)
	}
	got := fmt.Sprintln(resp.ToolCalls[0].ID, resp.ToolCalls[0].Name, string(resp.ToolCalls[0].Arguments),
		resp.ToolCalls[1].ID, resp.ToolCalls[1].Name, string(resp.ToolCalls[1].Arguments))
	if got != "call_a read {\"path\":\"x.txt\"} call_b list {}\n" {
		t.Errorf("tool calls = %v", got)
	}
	if resp.Usage != (model.Usage{}) {
		t.Errorf("usage = %+v, want none (the server sent none)", resp.Usage)
	}
}

// TestRequestFields checks max_tokens, temperature and that an empty key is allowed for a
// local server, whatever the process environment says.
func TestRequestFields(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) { sendText(w, "ok") })
	temp := 0.25
	p := openai.New(openai.Config{BaseURL: f.URL + "/v1", Model: "llama3"})
	_, err := model.Collect(p.Stream(context.Background(), model.Request{
		Model:       "qwen",
		Messages:    []model.Message{{Role: "user", Content: "hi"}},
		MaxTokens:   99,
		Temperature: &temp,
	}))
	if err != nil {
		t.Fatal(err)
	}
	req, header := f.request(0)
	if req.Model != "qwen" || req.MaxTokens == nil || *req.MaxTokens != 99 || req.MaxCompletionTokens != nil ||
		req.Temperature == nil || *req.Temperature != 0.25 {
		t.Errorf("request = %+v", req)
	}
	if auth := header.Get("Authorization"); auth != "" {
		t.Errorf("Authorization = %q, want none for an empty key (and none from the environment)", auth)
	}
}

// TestTruncatedStream checks that a stream cut before it finished is io.ErrUnexpectedEOF: retryable
// when nothing was delivered yet, not retryable once a delta went out.
func TestTruncatedStream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		pieces    []string
		retryable bool
	}{{"before any delta", nil, true}, {"after a delta", []string{"par"}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) {
				s := modeltest.StartSSE(w)
				for _, p := range tc.pieces {
					s.Data(modeltest.OpenAIChunk(map[string]any{"content": p}, nil))
				}
			})
			_, err := model.Collect(provider(f).Stream(context.Background(), model.Request{Messages: []model.Message{{Role: "user", Content: "hi"}}}))
			if err == nil || model.IsRetryable(err) != tc.retryable {
				t.Fatalf("err = %v, retryable = %v, want %v", err, model.IsRetryable(err), tc.retryable)
			}
		})
	}
}

// TestErrorInStream checks that an error event inside a 200 stream ends it with a *model.Error,
// and that WithRetry does not retry it once a delta was delivered.
func TestErrorInStream(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) {
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"content": "partial"}, nil))
		s.Data(map[string]any{"error": map[string]any{"message": "The server had an error", "type": "server_error"}})
	})
	var deltas []string
	var err error
	for c, e := range model.WithRetry(provider(f), fastRetry).Stream(context.Background(), model.Request{Messages: []model.Message{{Role: "user", Content: "hi"}}}) {
		if e != nil {
			err = e
			break
		}
		deltas = append(deltas, c.Delta)
	}
	e, ok := model.AsError(err)
	if !ok || !e.Retryable || e.Message != "The server had an error" {
		t.Fatalf("err = %#v", err)
	}
	if fmt.Sprint(deltas) != "[partial]" || f.count() != 1 {
		t.Errorf("deltas %v after %d requests, want [partial] after 1", deltas, f.count())
	}
}

// TestInvalidRequest checks errors found before anything is sent.
func TestInvalidRequest(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) { sendText(w, "ok") })
	p := openai.New(openai.Config{BaseURL: f.URL + "/v1"})
	for name, req := range map[string]model.Request{
		"no model":       {Messages: []model.Message{{Role: "user", Content: "hi"}}},
		"bad role":       {Model: "m", Messages: []model.Message{{Role: "robot", Content: "hi"}}},
		"bad parameters": {Model: "m", Tools: []model.ToolSpec{{Name: "t", Parameters: []byte(`[1]`)}}},
	} {
		_, err := model.Collect(p.Stream(context.Background(), req))
		if err == nil || model.IsRetryable(err) {
			t.Errorf("%s: err = %v, want a non-retryable error", name, err)
		}
	}
	if f.count() != 0 {
		t.Errorf("server saw %d requests, want 0", f.count())
	}
}

// TestFromEnv checks which environments make a provider.
func TestFromEnv(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if _, err := openai.FromEnv(env(nil), "gpt"); err == nil {
		t.Error("no key and no base URL: want an error")
	}
	if _, err := openai.FromEnv(env(map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1"}), "llama3"); err != nil {
		t.Errorf("local base URL without key: %v", err)
	}
	p, err := openai.FromEnv(env(map[string]string{"OPENAI_API_KEY": "sk-x"}), "gpt")
	if err != nil || p.Name() != "openai" {
		t.Errorf("key only: %v, %v", p, err)
	}
}
