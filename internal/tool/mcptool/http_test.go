package mcptool_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestStreamableHTTPServerGetsTheHeaders(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "web"}, nil)
	addText(srv, "search", "three results")
	var mu sync.Mutex
	var auth []string
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Team"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(web.Close)

	s := newServer(t, mcptool.Config{Name: "web", URL: web.URL + "/mcp",
		Headers: map[string]string{"Authorization": "Bearer s3cret", "X-Team": "blue"}})
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := names(tools); !slices.Equal(got, []string{"web__search"}) {
		t.Fatalf("tools = %v", got)
	}
	res, err := tools[0].Call(context.Background(), tool.Call{IdempotencyKey: "run_9/1/0"})
	if err != nil || res.Content != "three results" {
		t.Fatalf("call: %q, %v", res.Content, err)
	}
	mu.Lock()
	seen := slices.Clone(auth)
	mu.Unlock()
	if len(seen) < 2 {
		t.Fatalf("only %d requests reached the server", len(seen))
	}
	for i, a := range seen {
		if a != "Bearer s3cret|blue" {
			t.Errorf("request %d carried %q", i, a)
		}
	}

	// Without the header the server refuses, and that is an error, not a hang or a crash.
	bare := newServer(t, mcptool.Config{Name: "web", URL: web.URL + "/mcp"})
	if _, err := bare.Tools(context.Background()); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("a server answering 401: err = %v", err)
	}
}

// A streamable HTTP server's result larger than a message is clipped with a note, as a stdio
// server's is, whether the server answers with a JSON body or an event stream; the next call on
// the same server works. The note is the transport's ("the MCP server's answer was N bytes"): the
// body was never held whole. (Before, the SDK read the whole body, however large, and only the
// result's text was cut afterwards.)
func TestAnHTTPResultLargerThanAMessageIsClipped(t *testing.T) {
	t.Parallel()
	for _, jsonBody := range []bool{true, false} {
		t.Run(map[bool]string{true: "json", false: "sse"}[jsonBody], func(t *testing.T) {
			t.Parallel()
			srv := mcp.NewServer(&mcp.Implementation{Name: "web"}, nil)
			size := mcptool.MaxMessageBytes + 1<<20
			big := strings.Repeat("b", size)
			srv.AddTool(&mcp.Tool{Name: "big", Description: "a large result", InputSchema: objectSchema},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text(big), nil })
			addText(srv, "small", "fine")
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
				&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: jsonBody})
			web := httptest.NewServer(h)
			t.Cleanup(web.Close)
			s := newServer(t, mcptool.Config{Name: "web", URL: web.URL + "/mcp"})
			tools, err := s.Tools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]tool.Tool{}
			for _, tl := range tools {
				byName[tl.Name()] = tl
			}
			res, err := byName["web__big"].Call(context.Background(), tool.Call{})
			if err != nil {
				t.Fatalf("a result over the message limit: %v", err)
			}
			body, note, ok := strings.Cut(res.Content, "\n[truncated: ")
			if !ok || !strings.HasPrefix(note, "the MCP server's answer was ") || len(res.Content) > mcptool.MaxResultBytes || strings.Trim(body, "b") != "" {
				t.Fatalf("clipped result: %d bytes, note %.120q", len(res.Content), note)
			}
			if res, err := byName["web__small"].Call(context.Background(), tool.Call{}); err != nil || res.Content != "fine" {
				t.Fatalf("the next call: %q, %v", res.Content, err)
			}
		})
	}
}
