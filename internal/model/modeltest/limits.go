package modeltest

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
)

// Wire writes one provider's streaming answer piece by piece, so that the limit suite can make
// the same misbehaving server speak every provider's format.
type Wire interface {
	// Text opens an answer of text; TextDelta sends one piece of it, TextEnd closes the answer
	// (finish reason stop, usage input and output tokens).
	Text(s SSE)
	TextDelta(s SSE, piece string)
	TextEnd(s SSE, input, output int)
	// Tool opens an answer of one tool call (id, name) whose arguments begin with args;
	// ToolDelta sends one more piece of them, ToolEnd closes the call and the answer.
	Tool(s SSE, id, name, args string)
	ToolDelta(s SSE, piece string)
	ToolEnd(s SSE)
}

// Streaming is a provider under test: its wire format and how to make one against a fake
// server at baseURL, reached with hc.
type Streaming struct {
	Wire Wire
	New  func(baseURL string, hc *http.Client) model.Provider
}

// limits are the bounds of the limit tests: short, but far from one another so that each test
// breaks only the one it means to.
var limits = model.Limits{FirstByte: 30 * time.Second, Idle: 20 * time.Second, Total: 2 * time.Minute, MaxOutputBytes: 64 << 10}

// limitRetry retries as carryon does, in fewer and shorter waits.
var limitRetry = model.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: 2 * time.Second}

// limitDeadline is how long, in the bubble's fake time, a limit test waits for the call to
// end: far past every bound, so only a call that nothing bounds reaches it.
const limitDeadline = 10 * time.Minute

// TestLimits runs the limit suite against p: a server that never answers, one that sends its
// headers and then nothing, endless text, an endless tool call, a slow tool call that is alive,
// and a stream that outlasts the total bound. Each case runs in a synctest bubble on an
// in-memory network, through model.WithRetry(model.WithLimits(...)) as carryon calls a model.
func TestLimits(t *testing.T, p Streaming) {
	call := func(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) (model.Response, int, error) {
		t.Helper()
		var requests atomic.Int32
		n := NewNetwork(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			_, _ = io.Copy(io.Discard, r.Body) // read the request, as a server does
			answer(w, r)
		}))
		t.Cleanup(n.Close)
		client := model.WithRetry(model.WithLimits(p.New(n.URL, n.Client), limits), limitRetry)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		req := model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}
		resp, err := CollectWithin(t, limitDeadline, cancel, client.Stream(ctx, req))
		return resp, int(requests.Load()), err
	}
	w := p.Wire
	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		// A server that takes the request and never answers, not even with headers, fails each
		// attempt at the first-byte bound; the timeout is retried, then returned.
		{"NoHeaders", func(t *testing.T) {
			start := time.Now()
			_, requests, err := call(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
			wantBreach(t, err, model.CodeTimeout, "first-byte timeout", true)
			if requests != limitRetry.MaxAttempts {
				t.Errorf("%d requests, want %d (a timeout is retried)", requests, limitRetry.MaxAttempts)
			}
			if took := time.Since(start); took < 3*limits.FirstByte || took > 3*limits.FirstByte+10*time.Second {
				t.Errorf("the call ended after %s, want 3 × %s and the backoff", took, limits.FirstByte)
			}
		}},
		// A server that sends its headers and then nothing fails each attempt at the idle bound,
		// counted from the headers; retried, then returned.
		{"HeadersThenSilence", func(t *testing.T) {
			_, requests, err := call(t, func(w http.ResponseWriter, r *http.Request) {
				StartSSE(w)
				<-r.Context().Done()
			})
			wantBreach(t, err, model.CodeTimeout, "idle timeout", true)
			if requests != limitRetry.MaxAttempts {
				t.Errorf("%d requests, want %d (a timeout is retried)", requests, limitRetry.MaxAttempts)
			}
		}},
		// A stream of text that never ends (10 chunks of 1 KiB a second) stops at the output
		// bound, with no more than the bound collected, and is not retried.
		{"EndlessText", func(t *testing.T) {
			piece := strings.Repeat("x", 1024)
			resp, requests, err := call(t, func(rw http.ResponseWriter, r *http.Request) {
				s := StartSSE(rw)
				w.Text(s)
				every(r, 100*time.Millisecond, func() { w.TextDelta(s, piece) })
			})
			wantBreach(t, err, model.CodeOutputLimit, "output limit", false)
			if requests != 1 {
				t.Errorf("%d requests, want 1 (an output limit is not retried)", requests)
			}
			if n := len(resp.Text); n == 0 || n > limits.MaxOutputBytes {
				t.Errorf("%d bytes collected, want some and at most %d", n, limits.MaxOutputBytes)
			}
		}},
		// A tool call whose arguments never end also stops at the output bound, though the
		// provider yields nothing until a call is complete: it reports what it reads.
		{"EndlessToolCall", func(t *testing.T) {
			piece := strings.Repeat("y", 1024)
			resp, requests, err := call(t, func(rw http.ResponseWriter, r *http.Request) {
				s := StartSSE(rw)
				w.Tool(s, "call_1", "write_file", `{"text":"`)
				every(r, 100*time.Millisecond, func() { w.ToolDelta(s, piece) })
			})
			wantBreach(t, err, model.CodeOutputLimit, "output limit", false)
			if requests != 1 || len(resp.ToolCalls) != 0 {
				t.Errorf("%d requests, tool calls %v; want 1 and none", requests, resp.ToolCalls)
			}
		}},
		// A tool call whose arguments come slowly, for far longer than the idle bound, is not
		// idle: every fragment read counts, though none is yielded until the end.
		{"SlowToolCallIsAlive", func(t *testing.T) {
			resp, requests, err := call(t, func(rw http.ResponseWriter, r *http.Request) {
				s := StartSSE(rw)
				w.Tool(s, "call_1", "write_file", `{"text":"`)
				for range 10 { // one fragment every 10 s: 100 s of arguments, five times the idle bound
					if !pause(r, limits.Idle/2) {
						return
					}
					w.ToolDelta(s, "z")
				}
				w.ToolDelta(s, `"}`)
				w.ToolEnd(s)
			})
			if err != nil || requests != 1 || len(resp.ToolCalls) != 1 || string(resp.ToolCalls[0].Arguments) != `{"text":"zzzzzzzzzz"}` {
				t.Fatalf("error %v, %d requests, tool calls %v; want one call, no error", err, requests, resp.ToolCalls)
			}
		}},
		// A stream that keeps coming, never idle and small, stops at the total bound. Text was
		// yielded by then, so the timeout is not retried (a consumer never sees a delta twice).
		{"Total", func(t *testing.T) {
			start := time.Now()
			resp, requests, err := call(t, func(rw http.ResponseWriter, r *http.Request) {
				s := StartSSE(rw)
				w.Text(s)
				every(r, time.Second, func() { w.TextDelta(s, "tick ") })
			})
			wantBreach(t, err, model.CodeTimeout, "total timeout", true)
			if requests != 1 || resp.Text == "" {
				t.Errorf("%d requests, text %q; want 1 and the ticks before the bound", requests, resp.Text)
			}
			if took := time.Since(start); took != limits.Total {
				t.Errorf("the call ended after %s, want %s", took, limits.Total)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, tc.run)
		})
	}
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
