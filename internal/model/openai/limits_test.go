package openai_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/modeltest"
	"github.com/carryon-hub/carryon/internal/model/openai"
)

// limits are the bounds of the limit tests: short, but far from one another so that each test
// breaks only the one it means to.
var limits = model.Limits{FirstByte: 30 * time.Second, Idle: 20 * time.Second, Total: 2 * time.Minute, MaxOutputBytes: 64 << 10}

// limitRetry retries as carryon does, in fewer and shorter waits.
var limitRetry = model.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: 2 * time.Second}

// deadline is how long, in the bubble's fake time, a limit test waits for the call to end: far
// past every bound, so only a call that nothing bounds reaches it.
const deadline = 10 * time.Minute

// limitCall runs one call through retries and limits, as carryon calls a model, against a fake
// Chat Completions server on an in-memory network; it returns the response, the error and how
// many requests the server saw. It runs inside the caller's synctest bubble.
func limitCall(t *testing.T, lim model.Limits, answer func(w http.ResponseWriter, r *http.Request)) (model.Response, int, error) {
	t.Helper()
	var requests atomic.Int32
	n := modeltest.NewNetwork(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = io.Copy(io.Discard, r.Body) // read the request, as a server does
		answer(w, r)
	}))
	t.Cleanup(n.Close)
	p := openai.New(openai.Config{APIKey: "sk-test", BaseURL: n.URL + "/v1", Model: "gpt-test", HTTPClient: n.Client})
	client := model.WithRetry(model.WithLimits(p, lim), limitRetry)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req := model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}
	resp, err := modeltest.CollectWithin(t, deadline, cancel, client.Stream(ctx, req))
	return resp, int(requests.Load()), err
}

// every calls send every tick until the request ends.
func every(r *http.Request, tick time.Duration, send func()) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
			send()
		}
	}
}

// pause waits d, or until the request ends: then it reports false.
func pause(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.Context().Done():
		return false
	case <-t.C:
		return true
	}
}

// wantBreach checks that err is the *model.Error of a breached limit with the given code, whose
// message names the limit, and that it is retryable exactly when want.
func wantBreach(t *testing.T, err error, code, limit string, retryable bool) {
	t.Helper()
	e, ok := model.AsError(err)
	if !ok || e.Code != code || !strings.Contains(e.Message, limit) || e.Retryable != retryable || model.IsRetryable(err) != retryable {
		t.Fatalf("error %v (%#v), want code %s naming the %s, retryable %v", err, e, code, limit, retryable)
	}
}

// TestLimitNoHeaders: a server that takes the request and never answers, not even with headers,
// fails each attempt at the first-byte bound; the timeout is retried, then returned.
func TestLimitNoHeaders(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		_, requests, err := limitCall(t, limits, func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		})
		wantBreach(t, err, model.CodeTimeout, "first-byte timeout", true)
		if requests != limitRetry.MaxAttempts {
			t.Errorf("%d requests, want %d (a timeout is retried)", requests, limitRetry.MaxAttempts)
		}
		if took := time.Since(start); took < 3*limits.FirstByte || took > 3*limits.FirstByte+10*time.Second {
			t.Errorf("the call ended after %s, want 3 × %s and the backoff", took, limits.FirstByte)
		}
	})
}

// TestLimitHeadersThenSilence: a server that sends its headers and then nothing fails each
// attempt at the idle bound, counted from the headers; retried, then returned.
func TestLimitHeadersThenSilence(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		_, requests, err := limitCall(t, limits, func(w http.ResponseWriter, r *http.Request) {
			modeltest.StartSSE(w)
			<-r.Context().Done()
		})
		wantBreach(t, err, model.CodeTimeout, "idle timeout", true)
		if requests != limitRetry.MaxAttempts {
			t.Errorf("%d requests, want %d (a timeout is retried)", requests, limitRetry.MaxAttempts)
		}
	})
}

// TestLimitEndlessText: a stream of text that never ends (10 chunks of 1 KiB a second) stops at
// the output bound, with no more than the bound collected, and is not retried.
func TestLimitEndlessText(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		piece := strings.Repeat("x", 1024)
		resp, requests, err := limitCall(t, limits, func(w http.ResponseWriter, r *http.Request) {
			s := modeltest.StartSSE(w)
			every(r, 100*time.Millisecond, func() { s.Data(modeltest.OpenAIChunk(map[string]any{"content": piece}, nil)) })
		})
		wantBreach(t, err, model.CodeOutputLimit, "output limit", false)
		if requests != 1 {
			t.Errorf("%d requests, want 1 (an output limit is not retried)", requests)
		}
		if n := len(resp.Text); n == 0 || n > limits.MaxOutputBytes {
			t.Errorf("%d bytes collected, want some and at most %d", n, limits.MaxOutputBytes)
		}
	})
}

// TestLimitEndlessToolCall: a tool call whose arguments never end also stops at the output
// bound, though the provider yields nothing until a call is complete: it reports what it reads.
func TestLimitEndlessToolCall(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		piece := strings.Repeat("y", 1024)
		resp, requests, err := limitCall(t, limits, func(w http.ResponseWriter, r *http.Request) {
			s := modeltest.StartSSE(w)
			s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
				"index": 0, "id": "call_1", "type": "function", "function": map[string]any{"name": "write_file", "arguments": `{"text":"`},
			}}}, nil))
			every(r, 100*time.Millisecond, func() {
				s.Data(modeltest.OpenAIChunk(map[string]any{"tool_calls": []any{map[string]any{
					"index": 0, "function": map[string]any{"arguments": piece},
				}}}, nil))
			})
		})
		wantBreach(t, err, model.CodeOutputLimit, "output limit", false)
		if requests != 1 || len(resp.ToolCalls) != 0 {
			t.Errorf("%d requests, tool calls %v; want 1 and none", requests, resp.ToolCalls)
		}
	})
}

// TestLimitSlowToolCallIsAlive: a tool call whose arguments come slowly, for far longer than the
// idle bound, is not idle: every fragment read counts, though none is yielded until the end.
func TestLimitSlowToolCallIsAlive(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		resp, requests, err := limitCall(t, limits, func(w http.ResponseWriter, r *http.Request) {
			s := modeltest.StartSSE(w)
			s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
				"index": 0, "id": "call_1", "type": "function", "function": map[string]any{"name": "write_file", "arguments": `{"text":"`},
			}}}, nil))
			for range 10 { // one fragment every 10 s: 100 s of arguments, five times the idle bound
				if !pause(r, limits.Idle/2) {
					return
				}
				s.Data(modeltest.OpenAIChunk(map[string]any{"tool_calls": []any{map[string]any{
					"index": 0, "function": map[string]any{"arguments": "z"},
				}}}, nil))
			}
			s.Data(modeltest.OpenAIChunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": 0, "function": map[string]any{"arguments": `"}`},
			}}}, nil))
			s.Data(modeltest.OpenAIChunk(map[string]any{}, "tool_calls"))
			s.Done()
		})
		if err != nil || requests != 1 || len(resp.ToolCalls) != 1 {
			t.Fatalf("error %v, %d requests, tool calls %v; want one call, no error", err, requests, resp.ToolCalls)
		}
	})
}

// TestLimitTotal: a stream that keeps coming, never idle and small, stops at the total bound.
// Text was yielded by then, so the timeout is not retried (a consumer never sees a delta twice).
func TestLimitTotal(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		resp, requests, err := limitCall(t, limits, func(w http.ResponseWriter, r *http.Request) {
			s := modeltest.StartSSE(w)
			every(r, time.Second, func() { s.Data(modeltest.OpenAIChunk(map[string]any{"content": "tick "}, nil)) })
		})
		wantBreach(t, err, model.CodeTimeout, "total timeout", true)
		if requests != 1 || resp.Text == "" {
			t.Errorf("%d requests, text %q; want 1 and the ticks before the bound", requests, resp.Text)
		}
		if took := time.Since(start); took != limits.Total {
			t.Errorf("the call ended after %s, want %s", took, limits.Total)
		}
	})
}
