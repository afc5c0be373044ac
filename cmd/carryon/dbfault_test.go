package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/poll"
)

// TestDatabaseCutOverHTTP runs a real server process whose connections to PostgreSQL go through
// a proxy, and takes the database away (every connection cut, new ones refused): the native door
// and the OpenAI-compatible one answer 503 unavailable with Retry-After, /readyz is not ready,
// and once the database is back the server serves again; the write that failed, retried with its
// request id, is applied once.
func TestDatabaseCutOverHTTP(t *testing.T) {
	proxy, via := pgtest.NewProxyFor(t, pgDatabase(t))
	srv := startServer(t, t.TempDir(), "--db", via)
	key := localKey(t, srv.data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	conv := openaiDo(t, srv.url, key, "POST", "/v1/conversations", `{}`)
	if conv.status != 200 {
		t.Fatalf("create a conversation: %d %s", conv.status, conv.body)
	}
	convID := conv.json(t)["id"].(string)

	proxy.Refuse(true)
	proxy.Cut()
	unavailable := func(r response, err error) bool {
		return err == nil && r.status == 503 && r.header.Get("Retry-After") != "" && string(r.body) != "" &&
			r.json(t)["code"] != nil
	}
	poll.Eventually(t, "the native door answers 503 with Retry-After", func() bool {
		r, err := do(srv.url, key, "POST", "/v1/sessions/"+sid+"/messages", appendBody("during the cut", "request_id", "req-cut"))
		return unavailable(r, err) && r.json(t)["code"] == "unavailable"
	})
	r := openaiDo(t, srv.url, key, "GET", "/v1/conversations/"+convID, "")
	if r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Fatalf("OpenAI door during the cut: %d %s", r.status, r.body)
	}
	if e, _ := r.json(t)["error"].(map[string]any); e["code"] != "unavailable" {
		t.Fatalf("OpenAI door error: %s", r.body)
	}
	if r, err := do(srv.url, "", "GET", "/readyz", nil); err != nil || r.status != 503 {
		t.Fatalf("/readyz during the cut: %d %v %s", r.status, err, r.body)
	}

	proxy.Refuse(false)
	poll.Eventually(t, "/readyz after the database is back", func() bool {
		r, err := do(srv.url, "", "GET", "/readyz", nil)
		return err == nil && r.status == 200
	})
	for range 2 { // the retry, and a repeat of it: one message
		must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/messages", appendBody("during the cut", "request_id", "req-cut"), 201)
	}
	if r := openaiDo(t, srv.url, key, "GET", "/v1/conversations/"+convID, ""); r.status != 200 {
		t.Fatalf("OpenAI door after the cut: %d %s", r.status, r.body)
	}
	if n := must(t, srv.url, key, "GET", "/v1/sessions/"+sid, nil, 200).json(t)["message_count"]; n != 1.0 {
		t.Fatalf("message_count = %v after retrying one request id, want 1", n)
	}
}

// openaiDo sends one request to the OpenAI-compatible door, outside the native OpenAPI check.
func openaiDo(t *testing.T, url, key, method, path, body string) response {
	t.Helper()
	req, err := http.NewRequest(method, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{res.StatusCode, res.Header, b}
}
