package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/mcpserver"
	"github.com/carryon-hub/carryon/internal/openaiapi"
	"github.com/carryon-hub/carryon/internal/webui"
)

// TestNoSniffOnEveryAnswer: every answer of the server says X-Content-Type-Options: nosniff,
// whatever answers it: each route of the table (as its caller, without a key, and HEAD for the
// GET routes), the MCP, inspector and OpenAI-compatible mounts, an unknown path, a method the
// path has not, and a path that is not canonical.
func TestNoSniffOnEveryAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *httpapi.Config) {
		c.MCP = mcpserver.Handler(mcpserver.Config{Sessions: c.Sessions, Runs: c.Runs, LongTerm: c.LongTerm})
		c.UI = webui.Handler(webui.Config{})
		c.Doors = []httpapi.FrontDoor{openaiapi.New(openaiapi.Config{Sessions: c.Sessions, Runs: c.Runs})}
	})
	type call struct{ method, path, key, body string }
	var calls []call
	for _, rt := range httpapi.Routes() {
		path := wildcard.ReplaceAllString(rt.Pattern, "x")
		key := e.aliceKey
		if rt.Auth == httpapi.AuthAdmin {
			key = e.adminKey
		}
		body := `{}`
		if rt.Method == "GET" {
			body = ""
			calls = append(calls, call{"HEAD", path, key, ""})
		}
		calls = append(calls, call{rt.Method, path, key, body}, call{rt.Method, path, "", body})
	}
	if len(calls) < 60 {
		t.Fatalf("only %d calls from the route table", len(calls))
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	calls = append(calls,
		call{"POST", "/mcp", e.aliceKey, initialize}, call{"POST", "/mcp", "", initialize}, call{"GET", "/mcp", e.aliceKey, ""},
		call{"GET", "/ui/", "", ""}, call{"GET", "/ui/no-such-file.js", "", ""},
		call{"POST", "/v1/conversations", e.aliceKey, `{}`}, call{"GET", "/v1/conversations/sess_x", e.aliceKey, ""},
		call{"GET", "/v1/conversations/sess_x", "", ""}, call{"PUT", "/v1/conversations", e.aliceKey, `{}`},
		call{"POST", "/v1/responses", e.aliceKey, `{"input":"hi"}`}, call{"GET", "/v1/responses/run_x", e.aliceKey, ""},
		call{"GET", "/v1/no-such-route", e.aliceKey, ""}, call{"PUT", "/v1/sessions", e.aliceKey, `{}`},
		call{"GET", "/v1/./me", e.aliceKey, ""}, call{"GET", "//v1/sessions", e.aliceKey, ""},
	)
	for _, c := range calls {
		var body io.Reader
		if c.body != "" {
			body = strings.NewReader(c.body)
		}
		r, err := http.NewRequest(c.method, e.srv.URL+c.path, body)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if c.key != "" {
			r.Header.Set("Authorization", "Bearer "+c.key)
		}
		// Not the checked client: the mounts and the refused paths are not in the OpenAPI
		// document; the route table's answers are checked against it by the other tests.
		res, err := e.srv.Client().Do(r)
		if err != nil {
			t.Fatalf("%s %s: %v", c.method, c.path, err)
		}
		res.Body.Close()
		if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s (key %v): %d with X-Content-Type-Options %q, want nosniff", c.method, c.path, c.key != "", res.StatusCode, got)
		}
	}
}
