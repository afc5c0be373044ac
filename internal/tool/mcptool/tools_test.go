package mcptool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var objectSchema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)

func addText(srv *mcp.Server, name, reply string) {
	srv.AddTool(&mcp.Tool{Name: name, Description: "says " + reply, InputSchema: objectSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text(reply), nil })
}

func names(tools []tool.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name())
	}
	slices.Sort(out)
	return out
}

func newServer(t *testing.T, cfg mcptool.Config) *mcptool.Server {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s := mcptool.New(cfg, nil)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestToolsFollowsCursorsToTheLastPage(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "paged"}, &mcp.ServerOptions{PageSize: 2})
	var want []string
	for i := range 7 {
		addText(srv, fmt.Sprintf("t%d", i), "x")
		want = append(want, fmt.Sprintf("paged__t%d", i))
	}
	reqs := countRequests(srv)
	s := newServer(t, mcptool.Config{Name: "paged", Transport: inMemory(t, srv)})
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := names(tools); !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	if n := reqs.count("tools/list"); n != 4 {
		t.Errorf("tools/list was asked %d times, want 4 pages of at most 2", n)
	}
	// Cached: no new listing while the server says nothing changed.
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := reqs.count("tools/list"); n != 4 {
		t.Errorf("a second Tools listed again (%d requests); the list should be cached", n)
	}
}

func TestToolsRefreshesOnListChanged(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "live"}, nil)
	addText(srv, "first", "1")
	s := newServer(t, mcptool.Config{Name: "live", Transport: inMemory(t, srv)})
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := names(tools); !slices.Equal(got, []string{"live__first"}) {
		t.Fatalf("tools = %v", got)
	}
	addText(srv, "second", "2") // the server sends notifications/tools/list_changed
	eventually(t, "the new tool to be listed", func() bool {
		tools, err := s.Tools(context.Background())
		return err == nil && slices.Equal(names(tools), []string{"live__first", "live__second"})
	})
	srv.RemoveTools("first")
	eventually(t, "the removed tool to go", func() bool {
		tools, err := s.Tools(context.Background())
		return err == nil && slices.Equal(names(tools), []string{"live__second"})
	})
}

var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestToolNamesAreSanitisedAndStayDistinct(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "odd"}, nil)
	long := "a_very_long_tool_name_that_goes_on_and_on_well_past_what_providers_accept_"
	mcpNames := []string{"read.file", "read_file", "read file", "read/file", "ok-name", "ünïcode", long + "1", long + "2"}
	for _, n := range mcpNames {
		addText(srv, n, "reply of "+n)
	}
	s := newServer(t, mcptool.Config{Name: "odd", Transport: inMemory(t, srv)})
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != len(mcpNames) {
		t.Fatalf("got %d tools, want %d: %v", len(tools), len(mcpNames), names(tools))
	}
	seen := map[string]bool{}
	for _, tl := range tools {
		if !validName.MatchString(tl.Name()) {
			t.Errorf("name %q does not match %s", tl.Name(), validName)
		}
		if seen[tl.Name()] {
			t.Errorf("name %q given twice", tl.Name())
		}
		seen[tl.Name()] = true
	}
	for _, n := range []string{"odd__read_file", "odd__ok-name"} {
		if !seen[n] {
			t.Errorf("a name that needs no change was changed: %q missing from %v", n, names(tools))
		}
	}
	// Every tool can be called by its exposed name and reaches its own MCP tool.
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		res, err := reg.Invoke(context.Background(), tl.Name(), tool.Call{})
		if want := "reply of " + tl.(*mcptool.Tool).MCPName(); err != nil || res.Content != want {
			t.Errorf("%s: %q, %v; want %q", tl.Name(), res.Content, err, want)
		}
	}
	// The names do not depend on the order the server lists its tools in.
	srv2 := mcp.NewServer(&mcp.Implementation{Name: "odd"}, nil)
	for _, n := range slices.Backward(mcpNames) {
		addText(srv2, n, "x")
	}
	s2 := newServer(t, mcptool.Config{Name: "odd", Transport: inMemory(t, srv2)})
	tools2, err := s2.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names(tools), names(tools2)) {
		t.Errorf("names depend on order: %v vs %v", names(tools), names(tools2))
	}
}

func annotated(srv *mcp.Server, name string, a *mcp.ToolAnnotations) {
	srv.AddTool(&mcp.Tool{Name: name, InputSchema: objectSchema, Annotations: a},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text(name), nil })
}

func TestEffectClassesFollowAnnotationsOnlyWhenTrusted(t *testing.T) {
	t.Parallel()
	no, yes := false, true
	srv := mcp.NewServer(&mcp.Implementation{Name: "hints"}, nil)
	annotated(srv, "reader", &mcp.ToolAnnotations{ReadOnlyHint: true})
	annotated(srv, "setter", &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: &no})
	annotated(srv, "wiper", &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: &yes})
	annotated(srv, "vague", &mcp.ToolAnnotations{IdempotentHint: true}) // destructive by default
	annotated(srv, "plain", nil)
	want := map[bool]map[string]carryon.EffectClass{
		false: {"reader": "unsafe", "setter": "unsafe", "wiper": "unsafe", "vague": "unsafe", "plain": "unsafe"},
		true:  {"reader": "read", "setter": "idempotent", "wiper": "unsafe", "vague": "unsafe", "plain": "unsafe"},
	}
	for _, trust := range []bool{false, true} {
		s := newServer(t, mcptool.Config{Name: "hints", Transport: inMemory(t, srv), TrustAnnotations: trust})
		tools, err := s.Tools(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(tools) != 5 {
			t.Fatalf("got %v", names(tools))
		}
		for _, tl := range tools {
			mt := tl.(*mcptool.Tool)
			if got, w := tl.Effect(), want[trust][mt.MCPName()]; got != w {
				t.Errorf("trust=%v %s: effect %q, want %q", trust, mt.MCPName(), got, w)
			}
		}
	}
}

func TestWithEffectOverridesOneTool(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "o"}, nil)
	addText(srv, "lookup", "found")
	s := newServer(t, mcptool.Config{Name: "o", Transport: inMemory(t, srv)})
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	orig := tools[0].(*mcptool.Tool)
	read, err := orig.WithEffect(carryon.EffectRead)
	if err != nil {
		t.Fatal(err)
	}
	if read.Effect() != carryon.EffectRead || orig.Effect() != carryon.EffectUnsafe {
		t.Errorf("override: %q, original now %q", read.Effect(), orig.Effect())
	}
	if res, err := read.Call(context.Background(), tool.Call{}); err != nil || res.Content != "found" {
		t.Errorf("the overridden tool calls %q, %v", res.Content, err)
	}
	if _, err := orig.WithEffect(carryon.EffectReconcilable); carryon.ErrorCode(err) != carryon.EINVALID {
		t.Errorf("reconcilable for an MCP tool: err = %v", err)
	}
	if _, err := orig.WithEffect("sometimes"); carryon.ErrorCode(err) != carryon.EINVALID {
		t.Errorf("unknown class: err = %v", err)
	}
}

func TestSchemasAreCheckedBeforeTheCall(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "strict"}, nil)
	srv.AddTool(&mcp.Tool{Name: "add", InputSchema: json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#",
		"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ A, B float64 }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return text(fmt.Sprint(in.A + in.B)), nil
		})
	reqs := countRequests(srv)
	s := newServer(t, mcptool.Config{Name: "strict", Transport: inMemory(t, srv)})
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	_, err = reg.Invoke(context.Background(), "strict__add", tool.Call{Args: json.RawMessage(`{"a":1,"b":"two"}`)})
	var argErr *tool.ArgumentError
	if !errorsAs(err, &argErr) || argErr.Field != "b" {
		t.Fatalf("bad arguments: err = %v, want an ArgumentError on b", err)
	}
	if n := reqs.count("tools/call"); n != 0 {
		t.Errorf("the server got %d calls with arguments the schema refuses", n)
	}
	res, err := reg.Invoke(context.Background(), "strict__add", tool.Call{Args: json.RawMessage(`{"a":1,"b":2}`)})
	if err != nil || res.Content != "3" {
		t.Errorf("add: %q, %v", res.Content, err)
	}
}
