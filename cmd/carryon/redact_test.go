package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/model/modeltest"
)

// TestDeleteRedactsEveryCopy: a message deleted on SQLite is gone from every read and every row.
func TestDeleteRedactsEveryCopy(t *testing.T) {
	t.Parallel()
	testDeleteRedacts(t, "")
}

// TestDeleteRedactsEveryCopyPostgres: the same on PostgreSQL.
func TestDeleteRedactsEveryCopyPostgres(t *testing.T) {
	t.Parallel()
	testDeleteRedacts(t, pgDatabase(t))
}

// echoModel is an OpenAI-compatible model that answers "You said: " and the last user message,
// in two chunks: a reply that quotes its input, and calls no tool (so nothing of the input is
// in the agent's own state: its working memory and tool journal).
func echoModel(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(body, &req)
		last := ""
		for _, m := range req.Messages {
			if m.Role == "user" {
				_ = json.Unmarshal(m.Content, &last)
			}
		}
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": ""}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{"content": "You said: "}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{"content": last}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
		s.Data(modeltest.OpenAIUsage(10, 3))
		s.Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// testDeleteRedacts writes secrets into a conversation through every way in (a Responses call,
// whose input titles the conversation; a native append; a native run whose reply quotes its
// input), each with a request id, and forks the session. Then it deletes every message that
// holds a secret (the native delete, and the conversation item delete for one): every read of
// the session (messages, runs, events as JSON and as an SSE replay from the start, the
// Responses view and its stream replay, the conversation's items, the session list, and the
// repeats of the requests) shows none, while the fork still shows all three. Once the fork is
// deleted too, no row of any table holds any.
func testDeleteRedacts(t *testing.T, dsn string) {
	m := echoModel(t)
	dir := t.TempDir()
	file := writeFile(t, dir, "agents.yaml", `
providers:
  echo: {kind: openai, base_url: "`+m.URL+`/v1", api_key_env: ECHO_KEY}
agents:
  default:
    provider: echo
    model: echo-1
`)
	args := []string{"--agents", file}
	if dsn != "" {
		args = append(args, "--db", dsn)
	}
	data := t.TempDir()
	srv := startServerEnv(t, data, []string{"ECHO_KEY=sk-echo"}, args...)
	key := localKey(t, data)
	secrets := []string{"quokkasecret1", "quokkasecret2", "quokkasecret3"}

	respBody := map[string]any{"model": "echo-1", "input": "the code is " + secrets[0]}
	resp := compat(t, srv.url, key, "POST", "/v1/responses", respBody, 200, "Idempotency-Key: redact-resp").json(t)
	respID := resp["id"].(string)
	sid := resp["conversation"].(map[string]any)["id"].(string)
	if !strings.Contains(fmt.Sprint(resp["output"]), secrets[0]) {
		t.Fatalf("the reply does not quote the input: %v", resp)
	}
	if title := must(t, srv.url, key, "GET", "/v1/sessions/"+sid, nil, 200).json(t)["title"]; !strings.Contains(fmt.Sprint(title), secrets[0]) {
		t.Fatalf("title %v is not derived from the input", title)
	}
	appendBody := map[string]any{"messages": []map[string]any{{"role": "user", "content": "and " + secrets[1]}}}
	must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/messages", appendBody, 201, "Idempotency-Key: redact-append")
	runBody := map[string]any{"message": "then " + secrets[2]}
	runID := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", runBody, 202, "Idempotency-Key: redact-run").json(t)["id"].(string)
	if run := waitRun(t, srv, key, runID); run["status"] != "succeeded" || !strings.Contains(fmt.Sprint(run["reply"]), secrets[2]) {
		t.Fatalf("run = %v", run)
	}
	// A session titled by its user keeps its title when the message that says it goes.
	kept := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "and " + secrets[1]}, 201).json(t)["id"].(string)
	must(t, srv.url, key, "POST", "/v1/sessions/"+kept+"/messages", map[string]any{"messages": []map[string]any{{"role": "user", "content": "and " + secrets[1]}}}, 201)
	must(t, srv.url, key, "DELETE", "/v1/sessions/"+kept+"/messages/1", nil, 200)
	if title := must(t, srv.url, key, "GET", "/v1/sessions/"+kept, nil, 200).json(t)["title"]; title != "and "+secrets[1] {
		t.Fatalf("the title the user set became %v", title)
	}
	must(t, srv.url, key, "DELETE", "/v1/sessions/"+kept, nil, 204)

	fork := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/fork", map[string]any{}, 201).json(t)["id"].(string)

	items := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/messages?limit=100", nil, 200).json(t)["items"].([]any)
	deleted := 0
	for i, it := range items {
		msg := it.(map[string]any)
		if !holdsAny(fmt.Sprint(msg["content"]), secrets) {
			continue
		}
		seq := int64(msg["seq"].(float64))
		if i == 0 { // the compat door's delete is the same delete
			compat(t, srv.url, key, "DELETE", fmt.Sprintf("/v1/conversations/%s/items/msg_%d_0", sid, seq), nil, 200)
		} else {
			must(t, srv.url, key, "DELETE", fmt.Sprintf("/v1/sessions/%s/messages/%d", sid, seq), nil, 200)
		}
		deleted++
	}
	if deleted != 5 { // three inputs, two replies
		t.Fatalf("%d messages held a secret, want 5: %v", deleted, items)
	}

	// Every read of the session, and every repeat of its requests.
	runs := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/runs", nil, 200)
	reads := []response{runs,
		must(t, srv.url, key, "GET", "/v1/sessions/"+sid, nil, 200),
		must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/messages?include_deleted=true", nil, 200),
		must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/context", nil, 200),
		compat(t, srv.url, key, "GET", "/v1/conversations/"+sid+"/items", nil, 200),
		compat(t, srv.url, key, "GET", "/v1/responses/"+respID, nil, 200),
		compat(t, srv.url, key, "GET", "/v1/responses/"+respID+"/input_items", nil, 200),
		compat(t, srv.url, key, "GET", "/v1/responses/"+respID+"?stream=true&starting_after=0", nil, 200),
		compat(t, srv.url, key, "POST", "/v1/responses", respBody, 200, "Idempotency-Key: redact-resp"),
		must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/messages", appendBody, 201, "Idempotency-Key: redact-append"),
		must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", runBody, 202, "Idempotency-Key: redact-run"),
	}
	var runIDs []string
	for _, r := range runs.json(t)["items"].([]any) {
		runIDs = append(runIDs, r.(map[string]any)["id"].(string))
	}
	if len(runIDs) != 2 {
		t.Fatalf("runs %v, want 2", runIDs)
	}
	for _, id := range runIDs {
		reads = append(reads, must(t, srv.url, key, "GET", "/v1/runs/"+id, nil, 200),
			must(t, srv.url, key, "GET", "/v1/runs/"+id+"/events?follow=false", nil, 200),
			must(t, srv.url, key, "GET", "/v1/runs/"+id+"/events?follow=false", nil, 200, "Accept: text/event-stream", "Last-Event-ID: 0"))
	}
	for _, r := range reads {
		if holdsAny(string(r.body), secrets) {
			t.Fatalf("a read still holds a secret: %.1000s", r.body)
		}
	}
	if title := must(t, srv.url, key, "GET", "/v1/sessions/"+sid, nil, 200).json(t)["title"]; title != "" {
		t.Fatalf("the derived title is %q, want it cleared", title)
	}

	// The fork, made before the deletes, keeps its copy of each.
	forked := string(must(t, srv.url, key, "GET", "/v1/sessions/"+fork+"/messages?limit=100", nil, 200).body)
	for i, s := range secrets {
		if want := []int{2, 1, 2}[i]; strings.Count(forked, s) != want { // an input and the reply that quotes it
			t.Fatalf("the fork shows %s %d times, want %d: %s", s, strings.Count(forked, s), want, forked)
		}
	}

	// Once the last session that sees them is gone, no row holds any.
	must(t, srv.url, key, "DELETE", "/v1/sessions/"+fork, nil, 204)
	if list := must(t, srv.url, key, "GET", "/v1/sessions", nil, 200); holdsAny(string(list.body), secrets) {
		t.Fatalf("the session list holds a secret: %s", list.body)
	}
	if dsn == "" {
		scanSQLite(t, filepath.Join(data, "carryon.db"), secrets)
	} else {
		scanPostgres(t, dsn, secrets)
	}
}

// compat is must for the OpenAI-compatible routes, whose answers the native API's document
// (which http.DefaultTransport checks in these tests) does not describe.
func compat(t *testing.T, url, key, method, path string, body any, want int, headers ...string) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
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
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != want {
		t.Fatalf("%s %s = %d, want %d: %s (%v)", method, path, res.StatusCode, want, b, err)
	}
	return response{res.StatusCode, res.Header, b}
}

// holdsAny says whether text holds one of needles.
func holdsAny(text string, needles []string) bool {
	for _, n := range needles {
		if strings.Contains(text, n) {
			return true
		}
	}
	return false
}
