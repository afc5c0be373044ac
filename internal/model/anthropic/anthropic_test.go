package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/anthropic"
	"github.com/carryon-hub/carryon/internal/model/modeltest"
)

// provider returns a Provider talking to the fake server.
func provider(f *fakeServer) *anthropic.Provider {
	return anthropic.New(anthropic.Config{APIKey: "sk-ant-test", BaseURL: f.URL, Model: "claude-test"})
}

var weatherTool = model.ToolSpec{
	Name:        "get_weather",
	Description: "Current weather for a city.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`),
}

var hello = []model.Message{{Role: model.RoleUser, Content: "hi"}}

// TestToolConversation drives a three-step tool loop: two tool calls, then text. The fake server
// checks that each step's request carries the previous tool_use and its tool_result under the
// same id.
func TestToolConversation(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) {
		if !req.Stream || req.Model != "claude-test" || req.MaxTokens != anthropic.DefaultMaxTokens {
			t.Errorf("request %d: stream=%v model=%q max_tokens=%d", n, req.Stream, req.Model, req.MaxTokens)
		}
		if len(req.System) != 1 || req.System[0].Text != "You are terse." {
			t.Errorf("request %d: system = %+v", n, req.System)
		}
		if len(req.Tools) != 1 || req.Tools[0].Name != "get_weather" {
			t.Errorf("request %d: tools = %+v", n, req.Tools)
		}
		switch n {
		case 1:
			if len(req.Messages) != 1 || req.Messages[0].Role != "user" || req.Messages[0].Content[0].Text != "Weather in Paris, then London?" {
				t.Errorf("step 1 messages = %+v", req.Messages)
			}
			sendToolCall(w, "call_1", "get_weather", `{"ci`, `ty": "Pa`, `ris"}`)
		case 2:
			checkToolRoundTrip(t, req, "call_1", "Paris", "sunny")
			sendToolCall(w, "call_2", "get_weather", `{"city":`, ` "London"}`)
		case 3:
			checkToolRoundTrip(t, req, "call_2", "London", "rain")
			sendText(w, "Paris is sunny, ", "London rainy.")
		default:
			t.Errorf("unexpected request %d", n)
			sendError(w, http.StatusBadRequest, "invalid_request_error", nil)
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
		_, h := f.request(i)
		keyed := h.Get("X-Api-Key") == "sk-ant-test" || h.Get("Authorization") == "Bearer sk-ant-test"
		if !keyed || h.Get("Anthropic-Version") == "" {
			t.Errorf("request %d: the key or the API version is missing: %v", i+1, h)
		}
	}
}

// checkToolRoundTrip asserts that the last two messages are the assistant's tool_use (after its
// text) and the user's tool_result for it.
func checkToolRoundTrip(t *testing.T, req wireRequest, id, city, result string) {
	t.Helper()
	if len(req.Messages) < 2 {
		t.Errorf("too few messages: %+v", req.Messages)
		return
	}
	call, res := req.Messages[len(req.Messages)-2], req.Messages[len(req.Messages)-1]
	var input struct{ City string }
	if call.Role != "assistant" || len(call.Content) != 2 || call.Content[0].Type != "text" || call.Content[0].Text != "Checking." ||
		call.Content[1].Type != "tool_use" || call.Content[1].ID != id || call.Content[1].Name != "get_weather" ||
		json.Unmarshal(call.Content[1].Input, &input) != nil || input.City != city {
		t.Errorf("assistant message = %+v, want text then tool_use %s for %s", call, id, city)
	}
	if res.Role != "user" || len(res.Content) != 1 || res.Content[0].Type != "tool_result" || res.Content[0].ToolUseID != id ||
		len(res.Content[0].Content) != 1 || res.Content[0].Content[0].Text != result {
		t.Errorf("tool result message = %+v, want tool_result for %s with %q", res, id, result)
	}
}

// TestDeltasInOrder checks that each text_delta is yielded as its own chunk, in order, as it
// arrives: the server holds back the rest of the stream until the consumer has seen "c".
func TestDeltasInOrder(t *testing.T) {
	t.Parallel()
	seenC := make(chan struct{})
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) {
		s := modeltest.StartSSE(w)
		s.AnthropicStart(3)
		s.Event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		delta := func(p string) {
			s.Event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": p}})
		}
		for _, p := range []string{"a", "b", "c"} {
			delta(p)
		}
		select {
		case <-seenC:
		case <-time.After(5 * time.Second):
			t.Error("the consumer did not get \"c\" before the stream went on")
		}
		delta("d")
		delta("e")
		s.Event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		s.AnthropicEnd("end_turn", 5)
	})
	var deltas []string
	var last model.Chunk
	for c, err := range provider(f).Stream(context.Background(), model.Request{Messages: hello}) {
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

// TestUsage checks input tokens from message_start (cache reads included, and counted as the
// cached part) and output tokens from message_delta.
func TestUsage(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) {
		s := modeltest.StartSSE(w)
		s.Event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_test", "type": "message", "role": "assistant", "content": []any{}, "model": "claude-test",
			"usage": map[string]any{"input_tokens": 12, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 30, "output_tokens": 1},
		}})
		s.AnthropicText(0, "x")
		s.AnthropicEnd("max_tokens", 64)
	})
	resp, err := model.Collect(provider(f).Stream(context.Background(), model.Request{Messages: hello}))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != (model.Usage{InputTokens: 42, OutputTokens: 64, CachedTokens: 30}) || resp.FinishReason != model.FinishLength {
		t.Errorf("usage = %+v, finish = %q", resp.Usage, resp.FinishReason)
	}
}

// fastRetry retries quickly so tests do not wait.
var fastRetry = model.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond}

// TestRetryAfter429 checks that a 429 with Retry-After: 0 is retried once and then succeeds.
func TestRetryAfter429(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) {
		if n == 1 {
			sendError(w, http.StatusTooManyRequests, "rate_limit_error", map[string]string{"Retry-After": "0"})
			return
		}
		sendText(w, "ok")
	})
	resp, err := model.Collect(model.WithRetry(provider(f), fastRetry).Stream(context.Background(), model.Request{Messages: hello}))
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
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) {
		sendError(w, http.StatusInternalServerError, "api_error", nil)
	})
	_, err := model.Collect(model.WithRetry(provider(f), fastRetry).Stream(context.Background(), model.Request{Messages: hello}))
	e, ok := model.AsError(err)
	if !ok || !e.Retryable || e.Status != 500 || e.Provider != "anthropic" || e.Message != "fake failure 500" {
		t.Fatalf("err = %#v, want a retryable *model.Error with status 500", err)
	}
	if f.count() != fastRetry.MaxAttempts {
		t.Errorf("server saw %d requests, want %d", f.count(), fastRetry.MaxAttempts)
	}
}

// TestBadRequestNotRetried checks that a 400 is returned at once.
func TestBadRequestNotRetried(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) {
		sendError(w, http.StatusBadRequest, "invalid_request_error", nil)
	})
	_, err := model.Collect(model.WithRetry(provider(f), fastRetry).Stream(context.Background(), model.Request{Messages: hello}))
	e, ok := model.AsError(err)
	if !ok || e.Retryable || e.Status != 400 || model.IsRetryable(err) {
		t.Fatalf("err = %#v, want a non-retryable *model.Error with status 400", err)
	}
	if f.count() != 1 {
		t.Errorf("server saw %d requests, want 1", f.count())
	}
}

// TestContextCancelled checks that a cancelled call is not retryable and not retried.
func TestContextCancelled(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) { sendText(w, "never") })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := model.Collect(model.WithRetry(provider(f), fastRetry).Stream(ctx, model.Request{Messages: hello}))
	if err == nil || model.IsRetryable(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a non-retryable cancellation", err)
	}
	if f.count() != 0 {
		t.Errorf("server saw %d requests, want 0", f.count())
	}
}
