package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func appendBody(content string, extra ...any) map[string]any {
	b := map[string]any{"messages": []map[string]string{{"role": "user", "content": content}}}
	for i := 0; i+1 < len(extra); i += 2 {
		b[extra[i].(string)] = extra[i+1]
	}
	return b
}

// TestLostUpdateOverHTTP: two clients read version 3; one writes; the other's stale write is refused.
func TestLostUpdateOverHTTP(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	id := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	path := "/v1/sessions/" + id + "/messages"
	must(t, srv.url, key, "POST", path, appendBody("one"), 201)
	r := must(t, srv.url, key, "POST", path, appendBody("two"), 201)
	if r.header.Get("ETag") != `"3"` {
		t.Fatalf("ETag = %q, want \"3\"", r.header.Get("ETag"))
	}
	must(t, srv.url, key, "POST", path, appendBody("from A", "expected_version", 3), 201)
	c := must(t, srv.url, key, "POST", path, appendBody("from B", "expected_version", 3), 409).json(t)
	if c["code"] != "version_conflict" || c["current_version"] != 4.0 || c["detail"] == "" {
		t.Fatalf("conflict answer: %v", c)
	}
	p := must(t, srv.url, key, "POST", path, appendBody("from B"), 412, `If-Match: "3"`).json(t)
	if p["current_version"] != 4.0 {
		t.Fatalf("412 answer: %v", p)
	}
	v := must(t, srv.url, key, "GET", "/v1/sessions/"+id, nil, 200)
	if bytes.Contains(v.body, []byte("from B")) || v.json(t)["version"] != 4.0 {
		t.Fatalf("stale content stored: %s", v.body)
	}
}

// TestRequestIDAcrossRestart: concurrent duplicates store one message with identical answers; the
// replay after a restart is the same answer; another body with the key is 422; another user's
// use of the same key is their own request.
func TestRequestIDAcrossRestart(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	bob := addUser(t, data, "bob")
	id := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	path := "/v1/sessions/" + id + "/messages"
	var wg sync.WaitGroup
	answers := make([]response, 50)
	for i := range answers {
		wg.Go(func() {
			r, err := do(srv.url, key, "POST", path, appendBody("hello"), "Idempotency-Key: k-1")
			if err != nil {
				t.Error(err)
			}
			answers[i] = r
		})
	}
	wg.Wait()
	first := -1
	for i, a := range answers {
		if a.status/100 != 2 {
			if a.status != 409 || !bytes.Contains(a.body, []byte("request_in_flight")) {
				t.Fatalf("answer %d: %d %s", i, a.status, a.body)
			}
			continue
		}
		if first < 0 {
			first = i
		}
		if !bytes.Equal(a.body, answers[first].body) {
			t.Fatalf("answers differ:\n%s\n%s", a.body, answers[first].body)
		}
	}
	srv.kill()
	srv = startServer(t, data)
	again := must(t, srv.url, key, "POST", path, appendBody("hello"), 201, "Idempotency-Key: k-1")
	if !bytes.Equal(again.body, answers[first].body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay after restart: %s (replayed %q)", again.body, again.header.Get("Idempotent-Replayed"))
	}
	must(t, srv.url, key, "POST", path, appendBody("hello", "request_id", "k-1"), 201) // body field = header
	must(t, srv.url, key, "POST", path, appendBody("different"), 422, "Idempotency-Key: k-1")
	if n := must(t, srv.url, key, "GET", "/v1/sessions/"+id, nil, 200).json(t)["message_count"]; n != 1.0 {
		t.Fatalf("message_count = %v, want 1", n)
	}
	bobID := must(t, srv.url, bob, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	r := must(t, srv.url, bob, "POST", "/v1/sessions/"+bobID+"/messages", appendBody("hello"), 201, "Idempotency-Key: k-1")
	if r.header.Get("Idempotent-Replayed") == "true" || !strings.Contains(string(r.body), bobID) {
		t.Fatalf("bob got alice's answer: %s", r.body)
	}
}

// TestUsersAddWithAndWithoutServer: `carryon users add` works on the data directory whether or
// not a server is running, and prints the key alone on the last line.
func TestUsersAddWithAndWithoutServer(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	carol := addUser(t, data, "carol") // no server yet
	srv := startServer(t, data)
	dave := addUser(t, data, "dave") // server running
	for _, k := range []string{carol, dave} {
		me := must(t, srv.url, k, "GET", "/v1/me", nil, 200).json(t)
		if me["name"] != "carol" && me["name"] != "dave" {
			t.Fatalf("/v1/me = %v", me)
		}
	}
	must(t, srv.url, "", "GET", "/v1/sessions", nil, 401)
	must(t, srv.url, "ck_wrong", "GET", "/v1/sessions", nil, 401)
	var out bytes.Buffer
	err := run(context.Background(), []string{"users", "add", "carol", "--data", data}, envMap(nil), nil, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("duplicate user: %v", err)
	}
}

// addUser runs `carryon users add NAME --data DIR` and returns the key from the last stdout line.
func addUser(t *testing.T, data, name string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"users", "add", name, "--data", data}, envMap(nil), nil, &stdout, &stderr); err != nil {
		t.Fatalf("users add: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	key := lines[len(lines)-1]
	if !strings.HasPrefix(key, "ck_") || strings.Contains(key, " ") {
		t.Fatalf("last line %q is not a key", key)
	}
	return key
}

func envMap(m map[string]string) env {
	return func(k string) string {
		if k == "HOME" {
			return filepath.Join("/nonexistent", "home")
		}
		return m[k]
	}
}

// TestBadInputChangesNothing sends malformed requests to a real server: each gets a 4xx
// problem+json with a detail, and the session's version stays.
func TestBadInputChangesNothing(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	id := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	path := "/v1/sessions/" + id + "/messages"
	huge := append(append([]byte(`{"messages":[{"role":"user","content":"`), bytes.Repeat([]byte("x"), 40<<20)...), []byte(`"}]}`)...)
	cases := []struct {
		name, method, path string
		body               any
		want               int
	}{
		{"malformed", "POST", path, `{"messages": [`, 400},
		{"unknown field", "POST", path, `{"messages":[{"role":"user","content":"x"}],"extra":1}`, 400},
		{"wrong type", "POST", path, `{"messages":[{"role":"user","content":5}]}`, 400},
		{"invalid utf-8", "POST", path, []byte("{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\"}]}"), 400},
		{"40 MB", "POST", path, huge, 413},
		{"unknown session", "POST", "/v1/sessions/sess_nope/messages", appendBody("x"), 404},
		{"bad role", "POST", path, `{"messages":[{"role":"wizard","content":"x"}]}`, 400},
		{"empty list", "POST", path, `{"messages":[]}`, 400},
		{"trailing data", "POST", path, `{"messages":[{"role":"user","content":"x"}]} {}`, 400},
		{"bad patch", "PATCH", "/v1/sessions/" + id + "/memory", `{"patch":[1]}`, 400},
		{"bad limit", "GET", path + "?limit=abc", nil, 400},
	}
	for _, c := range cases {
		r, err := do(srv.url, key, c.method, c.path, c.body)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.status != c.want || !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") {
			t.Errorf("%s: %d %s %s, want %d problem+json", c.name, r.status, r.header.Get("Content-Type"), r.body, c.want)
			continue
		}
		if p := r.json(t); p["detail"] == "" || p["code"] == "" {
			t.Errorf("%s: no detail or code: %s", c.name, r.body)
		}
	}
	v := must(t, srv.url, key, "GET", "/v1/sessions/"+id, nil, 200).json(t)
	if v["version"] != 1.0 || v["message_count"] != 0.0 {
		t.Fatalf("session changed: %v", v)
	}
}
