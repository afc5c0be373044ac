package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/mcpserver"
	"github.com/carryon-hub/carryon/internal/openaiapi"
)

// The input gate on the native routes, on every driver: NUL escapes and numbers beyond a float
// in a run's metadata, and values nested deeper than every client reads back, are 400 naming
// the field, and nothing is stored.
func TestGateOnNativeRoutes(t *testing.T) {
	t.Parallel()
	drivers := envDrivers(t)
	deep := strings.Repeat(`{"a":`, 9000) + "1" + strings.Repeat("}", 9000)
	for name, start := range drivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := start(t)
			s := e.newSession("gate")
			for _, c := range []struct{ method, path, body, detail string }{
				{"POST", "/v1/sessions/" + s.ID + "/runs", `{"message":"go","metadata":{"k":"a\u0000"}}`, "metadata.k contains a NUL character"},
				{"POST", "/v1/sessions/" + s.ID + "/runs", `{"message":"go","metadata":{"k":1e400}}`, `field "metadata.k" is the number 1e400`},
				{"POST", "/v1/sessions/" + s.ID + "/runs", `{"message":"go","metadata":` + deep + `}`, "nested more than 128 levels deep"},
				{"PATCH", "/v1/sessions/" + s.ID, `{"metadata":` + deep + `}`, "nested more than 128 levels deep"},
				{"PATCH", "/v1/sessions/" + s.ID + "/memory", `{"patch":{"goal":` + deep + `}}`, "nested more than 128 levels deep"},
				{"POST", "/v1/sessions/" + s.ID + "/messages", `{"messages":[{"role":"user","content":"x","metadata":{"k\u0000":1}}]}`, "a name in messages[0].metadata contains a NUL character"},
				{"PUT", "/v1/memories/prefs/k", `{"value":` + deep + `}`, "nested more than 128 levels deep"},
			} {
				a := e.json(c.method, c.path, e.aliceKey, c.body)
				wantProblem(t, a, http.StatusBadRequest, carryon.EINVALID)
				if !strings.Contains(a.problem.Detail, c.detail) {
					t.Errorf("%s %s: detail %q, want %q", c.method, c.path, a.problem.Detail, c.detail)
				}
			}
			v, err := e.sessions.Get(carryon.NewContextWithUser(ctx(t), mustUser(t, e, e.aliceKey)), s.ID, carryon.GetOptions{Messages: -1})
			if err != nil || v.Version != s.Version || len(v.Messages) != 0 {
				t.Fatalf("the session changed: version %d (was %d), %d messages, %v", v.Version, s.Version, len(v.Messages), err)
			}
		})
	}
}

// A body that does not arrive in time is 408 on every door (the native routes, the
// OpenAI-compatible ones, /mcp) in the door's error shape, and no message names a socket address.
func TestSlowBodiesAre408OnEveryDoor(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	e := newEnv(t, func(c *httpapi.Config) {
		c.BodyReadTimeout = timeout
		c.MCP = mcpserver.Handler(mcpserver.Config{Sessions: c.Sessions, Runs: c.Runs, LongTerm: c.LongTerm})
		c.Doors = []httpapi.FrontDoor{openaiapi.New(openaiapi.Config{Sessions: c.Sessions, Runs: c.Runs})}
	})
	s := e.newSession("slow")
	for _, path := range []string{"/v1/sessions/" + s.ID + "/messages", "/v1/conversations", "/v1/conversations/" + s.ID + "/items", "/v1/responses", "/mcp"} {
		status, body := slowBody(t, e, path)
		if status != http.StatusRequestTimeout || !strings.Contains(body, "did not arrive within") {
			t.Errorf("%s: %d %s, want 408 saying the body did not arrive", path, status, body)
		}
		if host, _, _ := net.SplitHostPort(e.srv.Listener.Addr().String()); strings.Contains(body, host) {
			t.Errorf("%s: the answer names an address: %s", path, body)
		}
	}
}

// slowBody sends the headers of a POST with a 1000-byte body and then only a part of it, and
// returns the status and body of the answer.
func slowBody(t *testing.T, e *env, path string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{", path, e.aliceKey)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
