package mcptool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// oneTool serves a single tool called name with handler h and returns the carryon tool for it.
func oneTool(t *testing.T, name string, h mcp.ToolHandler, cfg mcptool.Config) tool.Tool {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "one"}, nil)
	srv.AddTool(&mcp.Tool{Name: name, InputSchema: objectSchema}, h)
	cfg.Name, cfg.Transport = "one", inMemory(t, srv)
	tools, err := newServer(t, cfg).Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 {
		t.Fatalf("tools = %v", names(tools))
	}
	return tools[0]
}

func result(c ...mcp.Content) mcp.ToolHandler {
	return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: c}, nil
	}
}

func TestCallPassesTheIdempotencyKeyInMeta(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var metas []map[string]any
	var args []string
	tl := oneTool(t, "record", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		metas = append(metas, req.Params.GetMeta())
		args = append(args, string(req.Params.Arguments))
		return text("ok"), nil
	}, mcptool.Config{})
	for _, key := range []string{"run_1/2/0", "run_1/2/0", "run_1/3/1"} {
		if _, err := tl.Call(context.Background(), tool.Call{Args: json.RawMessage(`{"q":"x"}`), IdempotencyKey: key}); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i, want := range []string{"run_1/2/0", "run_1/2/0", "run_1/3/1"} {
		if got := metas[i][mcptool.MetaIdempotencyKey]; got != want {
			t.Errorf("call %d: _meta[%q] = %v, want %q (meta %v)", i, mcptool.MetaIdempotencyKey, got, want, metas[i])
		}
		if args[i] != `{"q":"x"}` {
			t.Errorf("call %d: arguments %s", i, args[i])
		}
	}
}

func TestCallTimesOutOnAHangingTool(t *testing.T) {
	t.Parallel()
	released := make(chan struct{})
	var calls sync.WaitGroup
	tl := oneTool(t, "hang", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct{ Q string }
		_ = json.Unmarshal(req.Params.Arguments, &a)
		if a.Q == "quick" {
			return text("quick answer"), nil
		}
		calls.Add(1)
		defer calls.Done()
		<-ctx.Done() // the client's notifications/cancelled
		close(released)
		return nil, ctx.Err()
	}, mcptool.Config{CallTimeout: 200 * time.Millisecond})
	start := time.Now()
	_, err := tl.Call(context.Background(), tool.Call{Args: json.RawMessage(`{}`)})
	if err == nil || !strings.Contains(err.Error(), "did not answer within 200ms") ||
		!strings.Contains(err.Error(), "may or may not have taken effect") {
		t.Fatalf("err = %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the call took %s past a 200ms timeout", took)
	}
	select {
	case <-released:
	case <-time.After(10 * time.Second):
		t.Error("the server was never told the call was cancelled")
	}
	// The server is not wedged: the next call is answered.
	if res, err := tl.Call(context.Background(), tool.Call{Args: json.RawMessage(`{"q":"quick"}`)}); err != nil || res.Content != "quick answer" {
		t.Errorf("after a timeout: %q, %v", res.Content, err)
	}
}

func TestCallReturnsTheCallersCauseWhenItsContextEnds(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	tl := oneTool(t, "slow", func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}, mcptool.Config{})
	cause := errors.New("run lost its lease")
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() { <-started; cancel(cause) }()
	if _, err := tl.Call(ctx, tool.Call{}); !errors.Is(err, cause) {
		t.Errorf("err = %v, want the context's cause", err)
	}
}

func TestErrorResultsBecomeToolErrors(t *testing.T) {
	t.Parallel()
	tl := oneTool(t, "fail", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "disk full"}, &mcp.TextContent{Text: "try later"}}}, nil
	}, mcptool.Config{})
	_, err := tl.Call(context.Background(), tool.Call{})
	if err == nil || err.Error() != "one__fail: disk full\ntry later" {
		t.Errorf("isError: err = %v", err)
	}
	// A JSON-RPC error answer (what the SDK sends for a raw handler's Go error) is a tool error too.
	tl = oneTool(t, "boom", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("no such record")
	}, mcptool.Config{})
	if _, err := tl.Call(context.Background(), tool.Call{}); err == nil || err.Error() != `one__boom: MCP server "one" refused the call: no such record` {
		t.Errorf("handler error: err = %v", err)
	}
}

func TestAToolTheServerNoLongerHasIsRefused(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "gone"}, nil)
	addText(srv, "temp", "here")
	s := newServer(t, mcptool.Config{Name: "gone", Transport: inMemory(t, srv)})
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	srv.RemoveTools("temp")
	_, err = tools[0].Call(context.Background(), tool.Call{})
	if err == nil || !strings.Contains(err.Error(), `MCP server "gone" refused the call`) || !strings.Contains(err.Error(), "temp") {
		t.Errorf("err = %v", err)
	}
}

func TestResultsRenderEveryContentType(t *testing.T) {
	t.Parallel()
	size := int64(42)
	tl := oneTool(t, "mixed", result(
		&mcp.TextContent{Text: "hello"},
		&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 1234)},
		&mcp.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 10)},
		&mcp.ResourceLink{URI: "file:///a.txt", Name: "a.txt", MIMEType: "text/plain", Size: &size},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://note", MIMEType: "text/plain", Text: "the note"}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://blob", MIMEType: "application/zip", Blob: make([]byte, 7)}},
	), mcptool.Config{})
	res, err := tl.Call(context.Background(), tool.Call{})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"hello",
		"[image image/png, 1234 bytes]",
		"[audio audio/wav, 10 bytes]",
		`[resource link file:///a.txt "a.txt", text/plain]`,
		"[resource mem://note, text/plain]\nthe note",
		"[resource mem://blob, application/zip, 7 bytes]",
	}, "\n")
	if res.Content != want {
		t.Errorf("content:\n%s\nwant:\n%s", res.Content, want)
	}
}

func TestStructuredContentIsJSON(t *testing.T) {
	t.Parallel()
	structured := map[string]any{"temperature": 21.5, "sky": "clear"}
	only := oneTool(t, "only", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{StructuredContent: structured}, nil
	}, mcptool.Config{})
	res, err := only.Call(context.Background(), tool.Call{})
	if err != nil || res.Content != `{"sky":"clear","temperature":21.5}` {
		t.Errorf("structured only: %q, %v", res.Content, err)
	}
	// The usual shape: the same JSON as text too; the model gets it once.
	both := oneTool(t, "both", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{StructuredContent: structured,
			Content: []mcp.Content{&mcp.TextContent{Text: `{"temperature": 21.5, "sky": "clear"}`}}}, nil
	}, mcptool.Config{})
	if res, err := both.Call(context.Background(), tool.Call{}); err != nil || res.Content != `{"temperature": 21.5, "sky": "clear"}` {
		t.Errorf("structured and its text: %q, %v", res.Content, err)
	}
	// Different text: both are shown.
	other := oneTool(t, "other", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{StructuredContent: structured, Content: []mcp.Content{&mcp.TextContent{Text: "It is clear."}}}, nil
	}, mcptool.Config{})
	if res, err := other.Call(context.Background(), tool.Call{}); err != nil || res.Content != "It is clear.\n"+`{"sky":"clear","temperature":21.5}` {
		t.Errorf("structured and other text: %q, %v", res.Content, err)
	}
}

func TestLargeResultsAreClippedOnARuneBoundary(t *testing.T) {
	t.Parallel()
	// "é" is two bytes; an odd prefix puts a rune across the limit.
	big := "x" + strings.Repeat("é", mcptool.MaxResultBytes)
	tl := oneTool(t, "big", result(&mcp.TextContent{Text: big}), mcptool.Config{})
	res, err := tl.Call(context.Background(), tool.Call{})
	if err != nil {
		t.Fatal(err)
	}
	body, note, ok := strings.Cut(res.Content, "\n[truncated: ")
	if !ok {
		t.Fatalf("no truncation note in %d bytes", len(res.Content))
	}
	if !utf8.ValidString(body) || len(body) > mcptool.MaxResultBytes || len(body) < mcptool.MaxResultBytes-utf8.UTFMax {
		t.Errorf("clipped body: %d bytes, valid UTF-8 %v", len(body), utf8.ValidString(body))
	}
	if !strings.HasPrefix(big, body) {
		t.Error("the clipped body is not the start of the result")
	}
	if want := "of " + itoa(len(big)) + " bytes]"; !strings.HasSuffix(note, want) {
		t.Errorf("note %q does not end with %q", note, want)
	}
	small := oneTool(t, "small", result(&mcp.TextContent{Text: "é"}), mcptool.Config{})
	if res, err := small.Call(context.Background(), tool.Call{}); err != nil || res.Content != "é" {
		t.Errorf("small result: %q, %v", res.Content, err)
	}
}
