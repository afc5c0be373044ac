package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/model/modeltest"
)

// TestExtractFacts: POST /v1/sessions/{id}/extract has the session's model read the turns since
// the last extraction and writes the facts it answers to the owner's long-term memory, once per
// turn: a repeat with no new turns makes no model call, new turns stating the same facts
// consolidate into them, a profile without memory_extraction is refused.
func TestExtractFacts(t *testing.T) {
	t.Parallel()
	llm := newFakeProvider(t, "```json\n{\"facts\": [\"Is vegetarian.\", \"Lives in Lisbon.\"]}\n```")
	dir := t.TempDir()
	file := writeFile(t, dir, "agents.yaml", `
providers:
  fake: {kind: openai, base_url: "`+llm.URL+`/v1"}
agents:
  default: {provider: fake, model: m1, memory_extraction: {namespace: learned}}
  plain: {provider: fake, model: m1}
`)
	srv := startServer(t, t.TempDir(), "--agents", file)
	key := localKey(t, srv.data)
	agents := must(t, srv.url, key, "GET", "/v1/agents", nil, 200).json(t)
	if a := agents["items"].([]any)[0].(map[string]any); a["name"] != "default" || a["memory_extraction"] != "learned" {
		t.Fatalf("agents: %v", agents)
	}

	id := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	say := func(text string) {
		must(t, srv.url, key, "POST", "/v1/sessions/"+id+"/messages", map[string]any{"messages": []map[string]string{
			{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}}}, 201)
	}
	say("I'm vegetarian, and I live in Lisbon.")
	got := must(t, srv.url, key, "POST", "/v1/sessions/"+id+"/extract", nil, 200).json(t)
	facts := got["facts"].([]any)
	if len(facts) != 2 || got["from_seq"] != float64(0) || got["to_seq"] != float64(2) || got["namespace"] != "learned" ||
		facts[0].(map[string]any)["text"] != "Is vegetarian." || facts[0].(map[string]any)["consolidated_into"] != nil {
		t.Fatalf("first extraction: %v", got)
	}
	calls := len(llm.requests())
	if again := must(t, srv.url, key, "POST", "/v1/sessions/"+id+"/extract", nil, 200).json(t); len(again["facts"].([]any)) != 0 || len(llm.requests()) != calls {
		t.Fatalf("an extraction with no new turns: %v, %d model calls", again, len(llm.requests())-calls)
	}
	say("Still vegetarian, still in Lisbon.")
	third := must(t, srv.url, key, "POST", "/v1/sessions/"+id+"/extract", nil, 200).json(t)
	for _, f := range third["facts"].([]any) {
		if f.(map[string]any)["consolidated_into"] == nil {
			t.Fatalf("a fact learned again was added, not consolidated: %v", third)
		}
	}
	if items := must(t, srv.url, key, "GET", "/v1/memories?namespace=learned", nil, 200).json(t)["items"].([]any); len(items) != 2 {
		t.Fatalf("learned items: %v", items)
	}

	plain := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"agent": "plain"}, 201).json(t)["id"].(string)
	must(t, srv.url, key, "POST", "/v1/sessions/"+plain+"/extract", nil, 400)
	must(t, srv.url, key, "POST", "/v1/sessions/sess_nosuch/extract", nil, 404)
}

// TestExtractSurvivesKill: a server killed with SIGKILL while the extraction's model call is in
// flight wrote nothing; after a restart the same turns are learned from once.
func TestExtractSurvivesKill(t *testing.T) {
	t.Parallel()
	var stall atomic.Bool
	stall.Store(true)
	arrived := make(chan struct{}, 4)
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // so that the server sees the connection close
		if stall.Load() {
			arrived <- struct{}{}
			<-r.Context().Done() // until the server that asked dies
			return
		}
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": `{"facts": ["Has a cat named Miso."]}`}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
		s.Done()
	}))
	t.Cleanup(llm.Close)
	dir := t.TempDir()
	file := writeFile(t, dir, "agents.yaml", `
providers:
  fake: {kind: openai, base_url: "`+llm.URL+`/v1"}
agents:
  default: {provider: fake, model: m1, memory_extraction: {}}
`)
	data := t.TempDir()
	srv := startServer(t, data, "--agents", file)
	key := localKey(t, data)
	id := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	must(t, srv.url, key, "POST", "/v1/sessions/"+id+"/messages", map[string]any{"messages": []map[string]string{{"role": "user", "content": "My cat is called Miso."}}}, 201)
	req, _ := http.NewRequest("POST", srv.url+"/v1/sessions/"+id+"/extract", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	go http.DefaultClient.Do(req) //nolint:errcheck // dies with the server
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the extraction's model call never came")
	}
	srv.kill()
	stall.Store(false)

	srv = startServer(t, data, "--agents", file)
	if items := must(t, srv.url, key, "GET", "/v1/memories?namespace=facts", nil, 200).json(t)["items"].([]any); len(items) != 0 {
		t.Fatalf("facts after a kill during the model call: %v", items)
	}
	got := must(t, srv.url, key, "POST", "/v1/sessions/"+id+"/extract", nil, 200).json(t)
	if len(got["facts"].([]any)) != 1 || got["to_seq"] != float64(1) {
		t.Fatalf("extraction after the restart: %v", got)
	}
	if again := must(t, srv.url, key, "POST", "/v1/sessions/"+id+"/extract", nil, 200).json(t); len(again["facts"].([]any)) != 0 {
		t.Fatalf("a second extraction after the restart: %v", again)
	}
	if items := must(t, srv.url, key, "GET", "/v1/memories?namespace=facts", nil, 200).json(t)["items"].([]any); len(items) != 1 {
		t.Fatalf("facts: %v", items)
	}
}
