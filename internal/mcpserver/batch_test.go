package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/mcpserver"
)

// A JSON-RPC batch (protocol versions before 2025-06-18 have them) of more than MaxBatch messages
// is refused as a whole with a JSON-RPC error, before any of its calls runs; a smaller one runs.
// (One batch of 10,000 create_session calls used to make 10,000 sessions.)
func TestBatchBound(t *testing.T) {
	e := newEnv(t, options{})
	post := func(n int) (int, string) {
		var msgs []string
		for i := range n {
			msgs = append(msgs, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"create_session","arguments":{}}}`, i+1))
		}
		req, err := http.NewRequest("POST", e.srv.URL+"/mcp", strings.NewReader("["+strings.Join(msgs, ",")+"]"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+e.aliceKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
		resp, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b[:min(len(b), 2000)])
	}
	sessions := func() int {
		req, _ := http.NewRequest("GET", e.srv.URL+"/v1/sessions?limit=1000", nil)
		req.Header.Set("Authorization", "Bearer "+e.aliceKey)
		resp, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var page struct{ Items []json.RawMessage }
		if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
			t.Fatal(err)
		}
		return len(page.Items)
	}
	status, body := post(mcpserver.MaxBatch + 1)
	if status != 400 || !strings.Contains(body, `"code":-32600`) || !strings.Contains(body, "at most 32") {
		t.Fatalf("a batch over the bound: %d %s", status, body)
	}
	if n := sessions(); n != 0 {
		t.Fatalf("a refused batch made %d sessions", n)
	}
	if status, body := post(2); status != 200 || strings.Count(body, `"id"`) < 2 {
		t.Fatalf("a batch of 2: %d %s", status, body)
	}
	if n := sessions(); n != 2 {
		t.Fatalf("a batch of 2 made %d sessions", n)
	}
}
