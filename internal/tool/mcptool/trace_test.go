package mcptool_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/telemetry"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/mcptool"
)

// A call inside a traced tool call is a CLIENT span "tools/call <tool>" under it, named as the
// MCP conventions say, and the server gets the trace context in _meta; a tool error marks it.
func TestCallIsTracedAsAnMCPClientSpan(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var metas []map[string]any
	tl := oneTool(t, "echo", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		metas = append(metas, req.Params.GetMeta())
		mu.Unlock()
		var a struct{ Fail bool }
		_ = json.Unmarshal(req.Params.Arguments, &a)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo"}}, IsError: a.Fail}, nil
	}, mcptool.Config{})
	exp := tracetest.NewInMemoryExporter()
	tel := telemetry.New(telemetry.Options{Exporter: exp, Sync: true})
	for _, fail := range []bool{false, true} {
		a := &carryon.Action{ID: "act_1", RunID: "run_1", Tool: tl.Name(), CallID: "call_1", Effect: carryon.EffectUnsafe}
		ctx, span := tel.StartTool(context.Background(), a, "")
		args := `{"fail":false}`
		if fail {
			args = `{"fail":true}`
		}
		_, err := tl.Call(ctx, tool.Call{Args: json.RawMessage(args), IdempotencyKey: "run_1/1/0"})
		a.Status = carryon.ActionSucceeded
		if err != nil {
			a.Status = carryon.ActionFailed
		}
		span.End(a, nil)
	}
	// Outside a traced call nothing is recorded and nothing is added to _meta.
	if _, err := tl.Call(context.Background(), tool.Call{Args: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans().Snapshots()
	var mcpSpans, toolSpans []int
	for i, s := range spans {
		switch s.Name() {
		case "tools/call echo":
			mcpSpans = append(mcpSpans, i)
		case "execute_tool " + tl.Name():
			toolSpans = append(toolSpans, i)
		}
	}
	if len(mcpSpans) != 2 || len(toolSpans) != 2 || len(spans) != 4 {
		t.Fatalf("%d spans, %d MCP and %d execute_tool; want 2 of each", len(spans), len(mcpSpans), len(toolSpans))
	}
	for n, i := range mcpSpans {
		s := spans[i]
		parent := spans[toolSpans[n]]
		if s.SpanKind() != trace.SpanKindClient || s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("MCP span %d: kind %v parent %v, want a CLIENT child of its execute_tool span", n, s.SpanKind(), s.Parent().SpanID())
		}
		got := map[string]string{}
		for _, kv := range s.Attributes() {
			got[string(kv.Key)] = kv.Value.String()
		}
		if got["mcp.method.name"] != "tools/call" || got["gen_ai.tool.name"] != "echo" || got["gen_ai.operation.name"] != "execute_tool" {
			t.Errorf("MCP span %d attributes = %v", n, got)
		}
		if wantErr := n == 1; (got["error.type"] == "tool_error") != wantErr {
			t.Errorf("MCP span %d: error.type = %q, want tool_error only for the isError answer", n, got["error.type"])
		}
		mu.Lock()
		tp, _ := metas[n]["traceparent"].(string)
		mu.Unlock()
		if want := "00-" + s.SpanContext().TraceID().String() + "-" + s.SpanContext().SpanID().String() + "-01"; tp != want {
			t.Errorf("call %d: _meta traceparent = %q, want %q", n, tp, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if _, ok := metas[2]["traceparent"]; ok {
		t.Errorf("an untraced call sent a traceparent: %v", metas[2])
	}
}

// Listing a server's tools inside a traced run is a CLIENT span "tools/list".
func TestListingIsTraced(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "one"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: objectSchema}, result(&mcp.TextContent{Text: "echo"}))
	exp := tracetest.NewInMemoryExporter()
	tel := telemetry.New(telemetry.Options{Exporter: exp, Sync: true})
	run := &carryon.Run{ID: "run_1", Agent: "default", SessionID: "sess_1", Attempt: 1}
	ctx, span := tel.StartRun(context.Background(), run)
	if _, err := newServer(t, mcptool.Config{Name: "one", Transport: inMemory(t, srv)}).Tools(ctx); err != nil {
		t.Fatal(err)
	}
	span.End(run, carryon.RunSucceeded, nil)
	spans := exp.GetSpans().Snapshots()
	if len(spans) != 2 || spans[0].Name() != "tools/list" || spans[0].SpanKind() != trace.SpanKindClient ||
		spans[0].Parent().SpanID() != spans[1].SpanContext().SpanID() {
		t.Fatalf("spans = %v, want tools/list under invoke_agent", exp.GetSpans())
	}
}
