package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/agents"
	"github.com/carryon-hub/carryon/internal/tool"
)

// remoteTool is a tool an MCP server would offer: unsafe unless the profile says otherwise.
type remoteTool string

func (r remoteTool) Name() string              { return string(r) }
func (remoteTool) Description() string         { return "a tool of a server" }
func (remoteTool) Schema() json.RawMessage     { return json.RawMessage(`{"type":"object"}`) }
func (remoteTool) Effect() carryon.EffectClass { return carryon.EffectUnsafe }
func (remoteTool) Call(context.Context, tool.Call) (tool.Result, error) {
	return tool.Result{Content: "ok"}, nil
}

// countingSource offers its tools and counts how often it was asked.
type countingSource struct {
	tools []tool.Tool
	asked atomic.Int32
}

func (c *countingSource) Tools(context.Context) ([]tool.Tool, error) {
	c.asked.Add(1)
	return c.tools, nil
}

// TestProfilesTakeSourcesAtRunStart: the seam for MCP servers. A profile whose globs name a
// server gets the tools its source offers, asked again for every run, with the profile's effect
// overrides; a profile that names no server gets one engine for all its runs, and never asks.
func TestProfilesTakeSourcesAtRunStart(t *testing.T) {
	t.Parallel()
	src := `
providers:
  off: {kind: scripted}
mcp_servers:
  files: {command: [mcp-files]}
agents:
  default:
    provider: off
    tools: [read_file, "files__*"]
    effects: {files__read_text_file: read}
  plain:
    provider: off
    tools: [read_file]
`
	getenv := func(string) string { return "" }
	set, err := agents.Parse("agents.yaml", []byte(src), agents.Options{Getenv: getenv, Builtin: BuiltinTools(getenv)})
	if err != nil {
		t.Fatal(err)
	}
	files := &countingSource{tools: []tool.Tool{remoteTool("files__read_text_file"), remoteTool("files__write_file")}}
	p, err := newProfiles(set, getenv, t.TempDir(), nil, nil, map[string]tool.Source{"files": files}, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	for run := 1; run <= 2; run++ {
		eng, err := p.Engine(t.Context(), "default")
		if err != nil {
			t.Fatal(err)
		}
		read, ok1 := eng.Tools().Get("files__read_text_file")
		write, ok2 := eng.Tools().Get("files__write_file")
		if !ok1 || !ok2 || read.Effect() != carryon.EffectRead || write.Effect() != carryon.EffectUnsafe || len(eng.Tools().List()) != 3 {
			t.Fatalf("run %d: tools %v", run, eng.Tools().List())
		}
		if got := files.asked.Load(); got != int32(run) {
			t.Fatalf("run %d: the source was asked %d times", run, got)
		}
	}
	a, _ := p.Engine(t.Context(), "plain")
	b, _ := p.Engine(t.Context(), "plain")
	if a != b || len(a.Tools().List()) != 1 || files.asked.Load() != 2 {
		t.Fatalf("plain: one engine %v, tools %v, source asked %d times", a == b, a.Tools().List(), files.asked.Load())
	}
	if _, err := p.Engine(t.Context(), "nobody"); carryon.ErrorCode(err) != carryon.EINVALID {
		t.Fatalf("an unknown profile: %v", err)
	}
}
