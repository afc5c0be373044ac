package app

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/agents"
	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// syncBuffer is a log the test reads while the code under test writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// eventually is poll.Eventually: cond within 30 s, checked every 10 ms.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Eventually(t, what, cond)
}

// counterServer is an MCP server (the go-sdk's, over in-memory pipes) with the tools bump and
// peek, and the source of carryon's MCP client connected to it.
func counterServer(t *testing.T) (*mcp.Server, tool.Source) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "counter", Version: "1"}, nil)
	for _, name := range []string{"bump", "peek"} {
		addCounterTool(srv, name)
	}
	var mu sync.Mutex
	var sessions []*mcp.ServerSession
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, ss := range sessions {
			ss.Close()
		}
	})
	client := mcptool.New(mcptool.Config{Name: "counter", Transport: func() mcp.Transport {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), st, nil)
		if err != nil {
			panic(err) // the test's own server failing to connect is a bug of the test
		}
		mu.Lock()
		sessions = append(sessions, ss)
		mu.Unlock()
		return ct
	}}, nil)
	t.Cleanup(func() { client.Close() })
	return srv, client
}

func addCounterTool(srv *mcp.Server, name string) {
	srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
		})
}

// TestProfilesCheckKeysWhenTheServerLists: the keys that name an MCP server's tools are checked
// against what the server lists, when it first lists them and again after it says its list
// changed. A key that matches none of them (approval: {counter__bmup: always}) fails the run's
// start with the key, its line and the nearest names, logged at ERROR: counter__bump never runs
// without the approval the file meant for it.
func TestProfilesCheckKeysWhenTheServerLists(t *testing.T) {
	t.Parallel()
	src := `providers:
  off: {kind: scripted}
mcp_servers:
  counter: {command: [unused]}
agents:
  default:
    provider: off
    tools: ["counter__*"]
    approval: {counter__bump: always}
  typo:
    provider: off
    tools: ["counter__*"]
    approval: {counter__bmup: always}
`
	getenv := func(string) string { return "" }
	set, err := agents.Parse("agents.yaml", []byte(src), agents.Options{Getenv: getenv, Builtin: BuiltinTools(getenv)})
	if err != nil {
		t.Fatal(err)
	}
	srv, counter := counterServer(t)
	logs := &syncBuffer{}
	p, err := newProfiles(set, getenv, t.TempDir(), nil, nil, map[string]tool.Source{"counter": counter}, slog.New(slog.NewTextHandler(logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}

	_, err = p.Engine(t.Context(), "typo")
	want := "agents.yaml:13: agents.typo.approval.counter__bmup: the agent's tools do not include counter__bmup: MCP server counter lists no such tool (nearest: counter__bump)"
	if carryon.ErrorCode(err) != carryon.EINVALID || !strings.Contains(err.Error(), want) {
		t.Fatalf("the typo's run: %v\nwant %q", err, want)
	}
	if l := logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "counter__bmup") || !strings.Contains(l, "agent=typo") {
		t.Fatalf("the log does not say it at ERROR:\n%s", l)
	}

	eng, err := p.Engine(t.Context(), "default")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := eng.Tools().Get("counter__bump"); !ok || p.Profiles["default"].ApprovalOf("counter__bump") != carryon.ApprovalAlways {
		t.Fatalf("default's tools %v", eng.Tools().List())
	}

	// The server renames bump: it says its list changed, and the next run finds the key stale.
	srv.RemoveTools("bump")
	addCounterTool(srv, "bump_v2")
	eventually(t, "the changed list to be checked", func() bool {
		_, err := p.Engine(t.Context(), "default")
		return err != nil && strings.Contains(err.Error(), "agents.yaml:9: agents.default.approval.counter__bump: the agent's tools do not include counter__bump: MCP server counter lists no such tool (nearest: counter__bump_v2)")
	})
}
