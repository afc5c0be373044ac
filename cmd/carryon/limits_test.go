package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// openEvents opens the event stream of run on the server at url as key and returns its status;
// a 200 stream stays open until the returned close is called.
func openEvents(t *testing.T, url, key, run string) (int, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", url+"/v1/runs/"+run+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	closeIt := func() { res.Body.Close(); cancel() }
	if res.StatusCode != 200 {
		closeIt()
	}
	t.Cleanup(closeIt)
	return res.StatusCode, closeIt
}

// TestLimitsAcrossInstancesPostgres: two server processes on one PostgreSQL hold a user to its
// limits together, within the stated tolerance (each shares its counts once a second): the
// requests one instance took come out of the other's bucket of the user, and the streams open on
// one count on the other. An admin's limits set through one instance apply on the other.
func TestLimitsAcrossInstancesPostgres(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 2, nil, []string{"--workers", "0"}, []string{"--workers", "0"})
	a, b := c.srvs[0].url, c.srvs[1].url
	heavy := must(t, a, c.key, "POST", "/v1/users", map[string]any{"name": "heavy"}, 201).json(t)["key"].(string)
	streamer := must(t, a, c.key, "POST", "/v1/users", map[string]any{"name": "streamer"}, 201).json(t)["key"].(string)
	// Ten requests, then one every 100 s: nothing comes back while the test runs.
	must(t, a, c.key, "PUT", "/v1/users/heavy/limits", map[string]any{"requests_per_second": 0.01, "request_burst": 10}, 200)
	must(t, b, c.key, "PUT", "/v1/users/streamer/limits", map[string]any{"max_streams": 2}, 200)

	served := 0
	for ; served < 20; served++ {
		r, err := do(a, heavy, "GET", "/v1/me", nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.status == 429 {
			break
		}
	}
	if served != 10 {
		t.Fatalf("instance a served %d requests of a burst of 10", served)
	}
	// Instance b has a full bucket of its own until it reads a's share (within about two seconds):
	// probed every 400 ms, it serves a few at most, and then refuses; alone it would serve ten.
	onB, last := 0, time.Time{}
	refused := within(10*time.Second, func() bool {
		if time.Since(last) < 400*time.Millisecond {
			return false
		}
		last = time.Now()
		r, err := do(b, heavy, "GET", "/v1/me", nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.status == 200 {
			onB++
		}
		if r.status == 429 && r.header.Get("RateLimit") == "" {
			t.Errorf("b's 429 has no RateLimit field")
		}
		return r.status == 429
	})
	if !refused || onB > 6 {
		t.Fatalf("instance b refused: %v, after serving %d more of heavy's requests (the tolerance: what b serves before a's share reaches it)", refused, onB)
	}

	// Streams: two open on a; b refuses a third once it has read a's share, and lets one in again
	// once one of them closed.
	sess := must(t, a, streamer, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	run := must(t, a, streamer, "POST", "/v1/sessions/"+sess+"/runs", map[string]any{"message": "stays queued: no instance has workers"}, 202).json(t)["id"].(string)
	var closers []func()
	for range 2 {
		status, closeIt := openEvents(t, a, streamer, run)
		if status != 200 {
			t.Fatalf("a stream within the limit on a: %d", status)
		}
		closers = append(closers, closeIt)
	}
	if !within(10*time.Second, func() bool {
		status, closeIt := openEvents(t, b, streamer, run)
		closeIt()
		return status == 429
	}) {
		t.Fatal("instance b kept opening streams past max_streams 2 with two open on a")
	}
	closers[0]()
	if !within(10*time.Second, func() bool {
		status, closeIt := openEvents(t, b, streamer, run)
		closeIt()
		return status == 200
	}) {
		t.Fatal("instance b did not let a stream in after one on a closed")
	}
}

// TestRateLimitEveryDoor: a user out of its rate is refused on every front door, each in its own
// format, with Retry-After and the RateLimit fields; the quota refuses the doors' writes too.
func TestRateLimitEveryDoor(t *testing.T) {
	t.Parallel()
	srv := startServer(t, t.TempDir())
	admin := localKey(t, srv.data)
	key := must(t, srv.url, admin, "POST", "/v1/users", map[string]any{"name": "flooder"}, 201).json(t)["key"].(string)
	must(t, srv.url, admin, "PUT", "/v1/users/flooder/limits", map[string]any{"requests_per_second": 0.001, "request_burst": 1}, 200)
	if r := must(t, srv.url, key, "GET", "/v1/me", nil, 200); r.header.Get("RateLimit") != `"rate";r=0;t=1000` {
		t.Errorf("RateLimit after the one request of the burst = %q", r.header.Get("RateLimit"))
	}
	for _, d := range []struct{ method, path, body string }{
		{"GET", "/v1/sessions", ""},
		{"POST", "/v1/conversations", `{}`},
		{"GET", "/v1/responses/resp_x", ""},
		{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"POST", "/v1/ag-ui", `{}`},
		{"POST", "/v1/ai-sdk/chat", `{}`},
		{"POST", "/a2a", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`},
	} {
		var body any
		if d.body != "" {
			body = d.body
		}
		r := doorDo(t, srv.url, key, d.method, d.path, body, "Accept: application/json, text/event-stream")
		if r.status != 429 || r.header.Get("Retry-After") == "" || r.header.Get("RateLimit") == "" || r.header.Get("RateLimit-Policy") == "" {
			t.Errorf("%s %s: %d, Retry-After %q, RateLimit %q, RateLimit-Policy %q: %s", d.method, d.path, r.status,
				r.header.Get("Retry-After"), r.header.Get("RateLimit"), r.header.Get("RateLimit-Policy"), r.body)
		}
	}
	// The quota, on the doors that write by their method.
	must(t, srv.url, admin, "PUT", "/v1/users/flooder/limits", map[string]any{"max_stored_bytes": 1}, 200)
	must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "one"}, 201)
	conv := doorDo(t, srv.url, key, "POST", "/v1/conversations", "{}").json(t)["id"].(string)
	var stored bool
	if !within(10*time.Second, func() bool {
		r := doorDo(t, srv.url, key, "POST", "/v1/conversations/"+conv+"/items", `{"items":[{"type":"message","role":"user","content":"more and more"}]}`)
		stored = stored || r.status == 200
		return r.status == 507
	}) || !stored {
		t.Fatalf("the OpenAI door's item writes were not refused 507 past the quota (stored first: %v)", stored)
	}
	if r := doorDo(t, srv.url, key, "GET", "/v1/conversations/"+conv+"/items", nil); r.status != 200 {
		t.Errorf("reading the conversation past the quota: %d %s", r.status, r.body)
	}
	// /mcp: the tools that store more are refused with the quota's error; the reads still work.
	c := mcp.NewClient(&mcp.Implementation{Name: "carryon-limits", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.url + "/mcp", DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: bearer{key, &http.Transport{}}}}, nil)
	if err != nil {
		t.Fatalf("connect to /mcp: %v", err)
	}
	defer cs.Close()
	m, isErr := mcpTool(t, cs, "append_messages", map[string]any{"session_id": conv, "messages": []map[string]any{{"role": "user", "content": "more"}}})
	if e, _ := m["error"].(map[string]any); !isErr || e["code"] != "insufficient_storage" {
		t.Errorf("append_messages past the quota: %v (error %v)", m, isErr)
	}
	if m, isErr := mcpTool(t, cs, "get_session", map[string]any{"session_id": conv}); isErr {
		t.Errorf("get_session past the quota: %v", m)
	}
	// A2A: a message is refused; reading a task is not (a missing one is its not-found error).
	r := doorDo(t, srv.url, key, "POST", "/a2a", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-quota","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`)
	if !strings.Contains(string(r.body), `"carryon_code":"insufficient_storage"`) {
		t.Errorf("A2A SendMessage past the quota: %d %s", r.status, r.body)
	}
	r = doorDo(t, srv.url, key, "POST", "/a2a", `{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"run_missing"}}`)
	if strings.Contains(string(r.body), "insufficient_storage") || !strings.Contains(string(r.body), `not found`) {
		t.Errorf("A2A GetTask past the quota: %d %s", r.status, r.body)
	}
}

// doorDo sends one request to a door outside the OpenAPI document (whose answers the default
// transport would check against it); body is nil or a JSON string.
func doorDo(t *testing.T, url, key, method, path string, body any, headers ...string) response {
	t.Helper()
	var rd io.Reader
	if b, ok := body.(string); ok {
		rd = strings.NewReader(b)
	}
	req, err := http.NewRequest(method, url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	res, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, b}
}

// TestUsersLimits: carryon users limits reads and sets a user's limits on the database itself;
// bad limits are refused and change nothing.
func TestUsersLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	data := t.TempDir()
	if out, err := captureRun(ctx, "users", "add", "lim", "--data", data); err != nil {
		t.Fatalf("users add: %v\n%s", err, out)
	}
	out, err := captureRun(ctx, "users", "limits", "lim", "--set", `{"max_streams": 3, "requests_per_second": 2.5}`, "--data", data)
	if err != nil || !strings.Contains(out, `"max_streams": 3`) || !strings.Contains(out, `"requests_per_second": 2.5`) {
		t.Fatalf("users limits --set: %v\n%s", err, out)
	}
	for _, bad := range []string{`{"max_streams": -1}`, `{"nope": 1}`, `{"max_streams": "many"}`} {
		if out, err := captureRun(ctx, "users", "limits", "lim", "--set", bad, "--data", data); err == nil {
			t.Errorf("users limits --set %s: no error\n%s", bad, out)
		}
	}
	again, err := captureRun(ctx, "users", "limits", "lim", "--data", data)
	if err != nil || again != out {
		t.Fatalf("users limits after bad input: %v\n%s\nwant\n%s", err, again, out)
	}
	// Forgetting the user takes its limits with it.
	if out, err := captureRun(ctx, "users", "rm", "lim", "--data", data); err != nil {
		t.Fatalf("users rm of a user with limits: %v\n%s", err, out)
	}
	if _, err := captureRun(ctx, "users", "limits", "lim", "--data", data); carryon.ErrorCode(err) != carryon.ENOTFOUND {
		t.Fatalf("limits of a forgotten user: %v", err)
	}
}
