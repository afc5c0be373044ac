package modeltest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/model"
)

// Conformance is what the provider conformance suite needs of a provider: a request it answers
// with text, and one it answers with a call of a tool.
type Conformance struct {
	// Text returns the provider and a request it answers with text; want is that text, or ""
	// when the provider decides it (the suite then checks only that there is some).
	Text func(t *testing.T) (p model.Provider, req model.Request, want string)
	// Tool returns the provider and a request it answers with one call of the tool name.
	Tool func(t *testing.T) (p model.Provider, req model.Request, name string)
}

// TestConformance checks the model.Provider contract every provider keeps: text comes as
// deltas in order, then one last chunk with the finish reason and usage; a tool call comes
// whole in the last chunk, with an id and a JSON object of arguments; a stream whose context is
// cancelled ends with the context's error; a consumer that stops early stops the stream; and
// each range over a stream sends the request again.
func TestConformance(t *testing.T, c Conformance) {
	t.Run("Text", func(t *testing.T) {
		p, req, want := c.Text(t)
		var deltas []string
		var last model.Chunk
		chunks := 0
		for ch, err := range p.Stream(t.Context(), req) {
			if err != nil {
				t.Fatal(err)
			}
			chunks++
			if ch.Delta != "" {
				if last.FinishReason != "" || last.Usage != nil {
					t.Fatalf("a delta %q after the last chunk", ch.Delta)
				}
				deltas = append(deltas, ch.Delta)
			}
			if ch.FinishReason != "" || ch.Usage != nil {
				last = ch
			}
		}
		text := strings.Join(deltas, "")
		if text == "" || want != "" && text != want {
			t.Fatalf("text %q in %d deltas, want %q", text, len(deltas), want)
		}
		if last.FinishReason != model.FinishStop || last.Usage == nil || last.Usage.OutputTokens == 0 || len(last.ToolCalls) != 0 {
			t.Fatalf("last chunk %+v, want finish stop, the usage and no tool calls", last)
		}
		again, err := model.Collect(p.Stream(t.Context(), req))
		if err != nil || want != "" && again.Text != want {
			t.Fatalf("a second range: %q, %v", again.Text, err)
		}
	})
	t.Run("Tool", func(t *testing.T) {
		p, req, name := c.Tool(t)
		resp, err := model.Collect(p.Stream(t.Context(), req))
		if err != nil {
			t.Fatal(err)
		}
		if resp.FinishReason != model.FinishToolCalls || len(resp.ToolCalls) != 1 {
			t.Fatalf("finish %q, tool calls %+v; want one call and finish tool_calls", resp.FinishReason, resp.ToolCalls)
		}
		tc := resp.ToolCalls[0]
		var args map[string]any
		if tc.ID == "" || tc.Name != name || json.Unmarshal(tc.Arguments, &args) != nil {
			t.Fatalf("tool call %+v: want an id, the name %s and a JSON object of arguments", tc, name)
		}
	})
	t.Run("Cancelled", func(t *testing.T) {
		for what, answer := range map[string]func(*testing.T) (model.Provider, model.Request){
			"text": func(t *testing.T) (model.Provider, model.Request) { p, req, _ := c.Text(t); return p, req },
			"tool": func(t *testing.T) (model.Provider, model.Request) { p, req, _ := c.Tool(t); return p, req },
		} {
			p, req := answer(t)
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			var err error
			for _, err = range p.Stream(ctx, req) {
				if err != nil {
					break
				}
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("a cancelled stream of %s ended with %v, want context.Canceled", what, err)
			}
		}
	})
	t.Run("StopEarly", func(t *testing.T) {
		p, req, _ := c.Text(t)
		for range p.Stream(t.Context(), req) {
			break // the provider must not yield again (that panics) and must let go of the stream
		}
	})
}

// Served is the Conformance of a provider that streams from a server speaking p's wire: a fake
// server on a real socket answers "hello, world" in three pieces, or a call of write_file.
func Served(p Streaming) Conformance {
	serve := func(t *testing.T, answer func(s SSE)) model.Provider {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			answer(StartSSE(w))
		}))
		t.Cleanup(srv.Close)
		return p.New(srv.URL, srv.Client())
	}
	req := model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}},
		Tools: []model.ToolSpec{{Name: "write_file", Parameters: json.RawMessage(`{"type":"object"}`)}}}
	return Conformance{
		Text: func(t *testing.T) (model.Provider, model.Request, string) {
			return serve(t, func(s SSE) {
				p.Wire.Text(s)
				for _, piece := range []string{"hello", ", ", "world"} {
					p.Wire.TextDelta(s, piece)
				}
				p.Wire.TextEnd(s, 10, 3)
			}), req, "hello, world"
		},
		Tool: func(t *testing.T) (model.Provider, model.Request, string) {
			return serve(t, func(s SSE) {
				p.Wire.Tool(s, "call_1", "write_file", `{"path":"a.md",`)
				p.Wire.ToolDelta(s, `"content":"x"}`)
				p.Wire.ToolEnd(s)
			}), req, "write_file"
		},
	}
}
