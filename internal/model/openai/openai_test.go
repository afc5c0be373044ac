package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/modeltest"
	"github.com/carryon-hub/carryon/internal/model/openai"
)

// provider returns a Provider talking to the fake server.
func provider(f *fakeServer) *openai.Provider {
	return openai.New(openai.Config{APIKey: "sk-test", BaseURL: f.URL + "/v1", Model: "gpt-test"})
}

var weatherTool = model.ToolSpec{
	Name:        "get_weather",
	Description: "Current weather for a city.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
}

// TestToolConversation drives a three-step tool loop: two tool calls, then text. The fake server
// checks that each step's request carries the previous call and its result under the same id.
func TestToolConversation(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) {
		if !req.Stream || !req.StreamOptions.IncludeUsage {
			t.Errorf("request %d: stream=%v include_usage=%v, want both true", n, req.Stream, req.StreamOptions.IncludeUsage)
		}
		if len(req.Tools) != 1 || req.Tools[0].Type != "function" || req.Tools[0].Function.Name != "get_weather" {
			t.Errorf("request %d: tools = %+v", n, req.Tools)
		}
		switch n {
		case 1:
			if len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[1].Role != "user" {
				t.Errorf("step 1 messages = %+v", req.Messages)
			}
			sendToolCall(w, "call_1", "get_weather", `{"ci`, `ty": "Pa`, `ris"}`)
		case 2:
			checkToolRoundTrip(t, req, "call_1", `{"city": "Paris"}`, "sunny")
			sendToolCall(w, "call_2", "get_weather", `{"city":`, ` "London"}`)
		case 3:
			checkToolRoundTrip(t, req, "call_2", `{"city": "London"}`, "rain")
			sendText(w, "Paris is sunny, ", "London rainy.")
		default:
			t.Errorf("unexpected request %d", n)
			sendError(w, http.StatusBadRequest, nil)
		}
	})
	p := provider(f)
	req := model.Request{
		System:   "You are terse.",
		Messages: []model.Message{{Role: model.RoleUser, Content: "Weather in Paris, then London?"}},
		Tools:    []model.ToolSpec{weatherTool},
	}
	results := map[string]string{"Paris": "sunny", "London": "rain"}
	var ids []string
	var final model.Response
	for step := 1; step <= 5; step++ {
		resp, err := model.Collect(p.Stream(context.Background(), req))
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		req.Messages = append(req.Messages, model.Message{Role: model.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls})
		if resp.FinishReason != model.FinishToolCalls {
			final = resp
			break
		}
		for _, c := range resp.ToolCalls {
			var args struct{ City string }
			if err := json.Unmarshal(c.Arguments, &args); err != nil {
				t.Fatalf("step %d: arguments %s: %v", step, c.Arguments, err)
			}
			ids = append(ids, c.ID)
			req.Messages = append(req.Messages, model.Message{Role: model.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: results[args.City]})
		}
	}
	if fmt.Sprint(ids) != "[call_1 call_2]" {
		t.Errorf("tool call ids = %v, want [call_1 call_2]", ids)
	}
	if final.Text != "Paris is sunny, London rainy." || final.FinishReason != model.FinishStop {
		t.Errorf("final = %+v", final)
	}
	if f.count() != 3 {
		t.Fatalf("server saw %d requests, want 3", f.count())
	}
	for i := range 3 {
		if _, h := f.request(i); h.Get("Authorization") != "Bearer sk-test" {
			t.Errorf("request %d: Authorization = %q", i+1, h.Get("Authorization"))
		}
	}
}

// checkToolRoundTrip asserts that the last two messages are the assistant's call and its result.
func checkToolRoundTrip(t *testing.T, req wireRequest, id, args, result string) {
	t.Helper()
	if len(req.Messages) < 2 {
		t.Errorf("too few messages: %+v", req.Messages)
		return
	}
	call, res := req.Messages[len(req.Messages)-2], req.Messages[len(req.Messages)-1]
	if call.Role != "assistant" || len(call.ToolCalls) != 1 || call.ToolCalls[0].ID != id ||
		call.ToolCalls[0].Type != "function" || call.ToolCalls[0].Function.Name != "get_weather" ||
		call.ToolCalls[0].Function.Arguments != args {
		t.Errorf("assistant message = %+v, want call %s %s", call, id, args)
	}
	if res.Role != "tool" || res.ToolCallID != id || res.Content != result {
		t.Errorf("tool message = %+v, want tool_call_id %s content %q", res, id, result)
	}
}

// TestDeltasInOrder checks that each text delta is yielded as its own chunk, in order, as it
// arrives: the server holds back the rest of the stream until the consumer has seen "c".
func TestDeltasInOrder(t *testing.T) {
	t.Parallel()
	seenC := make(chan struct{})
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) {
		s := modeltest.StartSSE(w)
		for _, p := range []string{"a", "b", "c"} {
			s.Data(modeltest.OpenAIChunk(map[string]any{"content": p}, nil))
		}
		select {
		case <-seenC:
		case <-time.After(5 * time.Second):
			t.Error("the consumer did not get \"c\" before the stream went on")
		}
		for _, p := range []string{"d", "e"} {
			s.Data(modeltest.OpenAIChunk(map[string]any{"content": p}, nil))
		}
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
		s.Data(modeltest.OpenAIUsage(3, 5))
		s.Done()
	})
	var deltas []string
	var last model.Chunk
	for c, err := range provider(f).Stream(context.Background(), model.Request{Messages: []model.Message{{Role: "user", Content: "hi"}}}) {
		if err != nil {
			t.Fatal(err)
		}
		if c.Delta != "" {
			deltas = append(deltas, c.Delta)
			if c.Delta == "c" {
				close(seenC)
			}
		}
		last = c
	}
	if fmt.Sprint(deltas) != "[a b c d e]" {
		t.Errorf("deltas = %v", deltas)
	}
	if last.FinishReason != model.FinishStop || last.Usage == nil || *last.Usage != (model.Usage{InputTokens: 3, OutputTokens: 5}) {
		t.Errorf("last chunk = %+v", last)
	}
}

// TestUsage checks that usage reported in the stream's last chunk reaches the response.
func TestUsage(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) { sendText(w, "x", "y") })
	resp, err := model.Collect(provider(f).Stream(context.Background(), model.Request{Messages: []model.Message{{Role: "user", Content: "hi"}}}))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != (model.Usage{InputTokens: 10, OutputTokens: 2}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
}

// TestCachedTokens checks that the cached part of the prompt (prompt_tokens_details.cached_tokens)
// reaches the response's usage, which budgets price at the cached price.
func TestCachedTokens(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) {
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": "hi"}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
		u := modeltest.OpenAIUsage(100, 3)
		u["usage"].(map[string]any)["prompt_tokens_details"] = map[string]any{"cached_tokens": 64}
		s.Data(u)
		s.Done()
	})
	resp, err := model.Collect(provider(f).Stream(context.Background(), model.Request{Messages: []model.Message{{Role: "user", Content: "hi"}}}))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != (model.Usage{InputTokens: 100, OutputTokens: 3, CachedTokens: 64}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
}

// fastRetry retries quickly so tests do not wait.
var fastRetry = model.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond}

// TestRetryAfter429 checks that a 429 with Retry-After: 0 is retried once and then succeeds.
func TestRetryAfter429(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) {
		if n == 1 {
			sendError(w, http.StatusTooManyRequests, map[string]string{"Retry-After": "0"})
			return
		}
		sendText(w, "ok")
	})
	resp, err := model.Collect(model.WithRetry(provider(f), fastRetry).Stream(context.Background(), model.Request{Messages: []model.Message{{Role: "user", Content: "hi"}}}))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "ok" || f.count() != 2 {
		t.Errorf("text %q after %d requests, want \"ok\" after 2", resp.Text, f.count())
	}
}

// TestServerErrorsExhaustRetries checks that a 500 on every attempt ends, after MaxAttempts
// requests, with a retryable *model.Error.
func TestServerErrorsExhaustRetries(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) { sendError(w, http.StatusInternalServerError, nil) })
	_, err := model.Collect(model.WithRetry(provider(f), fastRetry).Stream(context.Background(), model.Request{Messages: []model.Message{{Role: "user", Content: "hi"}}}))
	e, ok := model.AsError(err)
	if !ok || !e.Retryable || e.Status != 500 || e.Provider != "openai" {
		t.Fatalf("err = %#v, want a retryable *model.Error with status 500", err)
	}
	if e.Message != "fake failure 500" {
		t.Errorf("message = %q, want the API's message", e.Message)
	}
	if f.count() != fastRetry.MaxAttempts {
		t.Errorf("server saw %d requests, want %d", f.count(), fastRetry.MaxAttempts)
	}
}

// TestBadRequestNotRetried checks that a 400 is returned at once.
func TestBadRequestNotRetried(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) { sendError(w, http.StatusBadRequest, nil) })
	_, err := model.Collect(model.WithRetry(provider(f), fastRetry).Stream(context.Background(), model.Request{Messages: []model.Message{{Role: "user", Content: "hi"}}}))
	e, ok := model.AsError(err)
	if !ok || e.Retryable || e.Status != 400 || model.IsRetryable(err) {
		t.Fatalf("err = %#v, want a non-retryable *model.Error with status 400", err)
	}
	if f.count() != 1 {
		t.Errorf("server saw %d requests, want 1", f.count())
	}
}

// TestSDKDoesNotRetry checks that the SDK's own retries are off: one call, one request.
func TestSDKDoesNotRetry(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) { sendError(w, http.StatusServiceUnavailable, nil) })
	_, err := model.Collect(provider(f).Stream(context.Background(), model.Request{Messages: []model.Message{{Role: "user", Content: "hi"}}}))
	if !model.IsRetryable(err) || f.count() != 1 {
		t.Fatalf("err = %v after %d requests, want a retryable error after 1", err, f.count())
	}
}

// TestContextCancelled checks that a cancelled call is not retryable and not retried.
func TestContextCancelled(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) { sendText(w, "never") })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := model.Collect(model.WithRetry(provider(f), fastRetry).Stream(ctx, model.Request{Messages: []model.Message{{Role: "user", Content: "hi"}}}))
	if err == nil || model.IsRetryable(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a non-retryable cancellation", err)
	}
	if f.count() != 0 {
		t.Errorf("server saw %d requests, want 0", f.count())
	}
}
