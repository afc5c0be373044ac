package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/model/embedtest"
)

// TestSemanticMemoryServed: a server whose agents file names embeddings (a fake OpenAI-compatible
// /v1/embeddings) says so in GET /v1/agents and agents check, finds a fact by meaning over HTTP
// where keywords find nothing, consolidates a repeated fact, and puts the fact found by meaning
// into a session's context.
func TestSemanticMemoryServed(t *testing.T) {
	t.Parallel()
	emb := embedtest.New(t, 64)
	emb.Concept("sushi", "food", "like", "likes", "loves", "eat")
	dir := t.TempDir()
	file := writeFile(t, dir, "agents.yaml", `
providers:
  off: {kind: scripted}
  local: {kind: openai, base_url: "`+emb.URL+`"}
embeddings: {provider: local, model: fake-embed, dimensions: 64, timeout: 5s}
agents:
  default: {provider: off}
`)
	srv := startServer(t, t.TempDir(), "--agents", file)
	key := localKey(t, srv.data)

	agents := must(t, srv.url, key, "GET", "/v1/agents", nil, 200)
	if !bytes.Contains(agents.body, []byte(`"memory":{"search":"hybrid","embeddings":{"provider":"local","model":"fake-embed","dimensions":64}}`)) {
		t.Fatalf("GET /v1/agents: %s", agents.body)
	}
	if out := cli(t, srv, "agents", "check", file); !strings.Contains(out, "long-term memory: hybrid search, embeddings by local (fake-embed, 64 dimensions)") {
		t.Fatalf("agents check:\n%s", out)
	}

	emb.FailNext(1) // retried
	must(t, srv.url, key, "PUT", "/v1/memories/prefs/k1", map[string]any{"value": "loves sushi", "text": "loves sushi"}, 200)
	must(t, srv.url, key, "PUT", "/v1/memories/prefs/k2", map[string]any{"value": "the sky is blue", "text": "the sky is blue"}, 200)
	q := "what food does she enjoy?"
	sem := must(t, srv.url, key, "POST", "/v1/memories/search", map[string]any{"query": q, "mode": "semantic", "limit": 1}, 200).json(t)
	items := sem["items"].([]any)
	if sem["mode"] != "semantic" || len(items) != 1 || items[0].(map[string]any)["key"] != "k1" {
		t.Fatalf("semantic search: %v", sem)
	}
	kw := must(t, srv.url, key, "POST", "/v1/memories/search", map[string]any{"query": q, "mode": "keyword"}, 200).json(t)
	if len(kw["items"].([]any)) != 0 {
		t.Fatalf("keyword search found what shares no word: %v", kw)
	}
	must(t, srv.url, key, "POST", "/v1/memories/search", map[string]any{"query": q, "mode": "vectors"}, 400)

	first := must(t, srv.url, key, "POST", "/v1/memories/facts", map[string]any{"text": "eats sushi on fridays"}, 200).json(t)
	again := must(t, srv.url, key, "POST", "/v1/memories/facts", map[string]any{"text": "Eats sushi on Fridays!"}, 200).json(t)
	if again["consolidated_into"] != first["key"] || again["version"] != float64(2) {
		t.Fatalf("a repeated fact: %v then %v", first, again)
	}
	must(t, srv.url, key, "POST", "/v1/memories/facts", map[string]any{}, 400)

	id := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	must(t, srv.url, key, "POST", "/v1/sessions/"+id+"/messages", map[string]any{"messages": []map[string]string{{"role": "user", "content": q}}}, 201)
	preview := must(t, srv.url, key, "GET", "/v1/sessions/"+id+"/context", nil, 200)
	if !bytes.Contains(preview.body, []byte("loves sushi")) {
		t.Fatalf("the context lacks the fact found by meaning: %s", preview.body)
	}
}
