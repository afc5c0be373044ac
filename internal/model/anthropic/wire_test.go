package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/anthropic"
	"github.com/carryon-hub/carryon/internal/model/modeltest"
)

// TestMessageMapping sends a conversation with parallel tool calls and checks the wire request:
// system messages joined to the system prompt, both tool_use blocks in one assistant message,
// both tool_result blocks (and the next user text) in one user message, an empty result without
// content, the schema's extra keywords kept, temperature and max_tokens set.
func TestMessageMapping(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-env")
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) { sendText(w, "ok") })
	temp := 0.5
	p := anthropic.New(anthropic.Config{BaseURL: f.URL, Model: "claude-test", MaxTokens: 100})
	_, err := model.Collect(p.Stream(context.Background(), model.Request{
		System: "Be brief.",
		Messages: []model.Message{
			{Role: model.RoleSystem, Content: "Summary: earlier work."},
			{Role: model.RoleUser, Content: "Read a and b."},
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
				{ID: "toolu_a", Name: "read", Arguments: json.RawMessage(`{"path":"a"}`)},
				{ID: "toolu_b", Name: "read"},
			}},
			{Role: model.RoleTool, ToolCallID: "toolu_a", Name: "read", Content: "A"},
			{Role: model.RoleTool, ToolCallID: "toolu_b", Name: "read"},
			{Role: model.RoleUser, Content: "Now compare."},
		},
		Tools:       []model.ToolSpec{weatherTool},
		MaxTokens:   0,
		Temperature: &temp,
	}))
	if err != nil {
		t.Fatal(err)
	}
	req, h := f.request(0)
	if len(req.System) != 1 || req.System[0].Text != "Be brief.\n\nSummary: earlier work." {
		t.Errorf("system = %+v", req.System)
	}
	if req.MaxTokens != 100 || req.Temperature == nil || *req.Temperature != 0.5 {
		t.Errorf("max_tokens = %d, temperature = %v", req.MaxTokens, req.Temperature)
	}
	if len(req.Messages) != 3 {
		t.Fatalf("messages = %+v, want user, assistant, user", req.Messages)
	}
	a, u := req.Messages[1], req.Messages[2]
	if a.Role != "assistant" || len(a.Content) != 2 || a.Content[0].ID != "toolu_a" || string(a.Content[0].Input) != `{"path":"a"}` ||
		a.Content[1].ID != "toolu_b" || string(a.Content[1].Input) != `{}` {
		t.Errorf("assistant = %+v", a)
	}
	if u.Role != "user" || len(u.Content) != 3 || u.Content[0].ToolUseID != "toolu_a" || u.Content[0].Content[0].Text != "A" ||
		u.Content[1].ToolUseID != "toolu_b" || len(u.Content[1].Content) != 0 || u.Content[2].Type != "text" || u.Content[2].Text != "Now compare." {
		t.Errorf("user = %+v", u)
	}
	var schema map[string]any
	if err := json.Unmarshal(req.Tools[0].InputSchema, &schema); err != nil || schema["type"] != "object" ||
		schema["additionalProperties"] != false || fmt.Sprint(schema["required"]) != "[city]" || schema["properties"] == nil {
		t.Errorf("input_schema = %s", req.Tools[0].InputSchema)
	}
	if h.Get("X-Api-Key") != "" || h.Get("Authorization") != "" {
		t.Errorf("a key was sent though none was configured: %v", h)
	}
}

// TestErrorEventBeforeText checks that an overloaded error event before any text is retryable and
// retried, and the retry's text is delivered once.
func TestErrorEventBeforeText(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) {
		if n > 1 {
			sendText(w, "fine")
			return
		}
		s := modeltest.StartSSE(w)
		s.AnthropicStart(5)
		s.Event("error", map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": "Overloaded"}})
	})
	var deltas []string
	for c, err := range model.WithRetry(provider(f), fastRetry).Stream(context.Background(), model.Request{Messages: hello}) {
		if err != nil {
			t.Fatal(err)
		}
		if c.Delta != "" {
			deltas = append(deltas, c.Delta)
		}
	}
	if fmt.Sprint(deltas) != "[fine]" || f.count() != 2 {
		t.Errorf("deltas %v after %d requests, want [fine] after 2", deltas, f.count())
	}
}

// TestErrorEventAfterText checks that an error event after a delta ends the stream with a
// *model.Error and is not retried: the consumer never sees a delta twice.
func TestErrorEventAfterText(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) {
		s := modeltest.StartSSE(w)
		s.AnthropicStart(5)
		s.AnthropicText(0, "half")
		s.Event("error", map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": "Overloaded"}})
	})
	var deltas []string
	var err error
	for c, e := range model.WithRetry(provider(f), fastRetry).Stream(context.Background(), model.Request{Messages: hello}) {
		if e != nil {
			err = e
			break
		}
		deltas = append(deltas, c.Delta)
	}
	e, ok := model.AsError(err)
	if !ok || e.Status != 529 || !e.Retryable || e.Message != "Overloaded" {
		t.Fatalf("err = %#v", err)
	}
	if fmt.Sprint(deltas) != "[half]" || f.count() != 1 {
		t.Errorf("deltas %v after %d requests, want [half] after 1", deltas, f.count())
	}
}

// TestTruncatedStream checks that a stream without message_stop is io.ErrUnexpectedEOF: retryable
// when nothing was delivered yet, not retryable once a delta went out.
func TestTruncatedStream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		text      bool
		retryable bool
	}{{"before any delta", false, true}, {"after a delta", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) {
				s := modeltest.StartSSE(w)
				s.AnthropicStart(5)
				if tc.text {
					s.AnthropicText(0, "par")
				}
			})
			_, err := model.Collect(provider(f).Stream(context.Background(), model.Request{Messages: hello}))
			if err == nil || model.IsRetryable(err) != tc.retryable {
				t.Fatalf("err = %v, retryable = %v, want %v", err, model.IsRetryable(err), tc.retryable)
			}
		})
	}
}

// TestInvalidRequest checks errors found before anything is sent.
func TestInvalidRequest(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(n int, req wireRequest, w http.ResponseWriter) { sendText(w, "ok") })
	p := anthropic.New(anthropic.Config{BaseURL: f.URL})
	for name, req := range map[string]model.Request{
		"no model":        {Messages: hello},
		"bad role":        {Model: "m", Messages: []model.Message{{Role: "robot", Content: "hi"}}},
		"tool without id": {Model: "m", Messages: []model.Message{{Role: "tool", Content: "x"}}},
		"bad parameters":  {Model: "m", Messages: hello, Tools: []model.ToolSpec{{Name: "t", Parameters: []byte(`[1]`)}}},
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
	if _, err := anthropic.FromEnv(env(nil), "claude"); err == nil {
		t.Error("no key and no base URL: want an error")
	}
	if _, err := anthropic.FromEnv(env(map[string]string{"ANTHROPIC_BASE_URL": "http://localhost:8080"}), "claude"); err != nil {
		t.Errorf("base URL without key: %v", err)
	}
	p, err := anthropic.FromEnv(env(map[string]string{"ANTHROPIC_API_KEY": "sk-ant-x"}), "claude")
	if err != nil || p.Name() != "anthropic" {
		t.Errorf("key only: %v, %v", p, err)
	}
}
