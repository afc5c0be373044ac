package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/model/modeltest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	// The CLI and the MCP tool learn through the same route: a new turn, once.
	say("I moved to Porto.")
	if out := cli(t, srv, "sessions", "extract", id); !strings.Contains(out, "2 facts learned from messages 5-6 into learned") || !strings.Contains(out, "(into ") {
		t.Fatalf("sessions extract:\n%s", out)
	}
	say("Porto is lovely.")
	h := &repeatHub{t: t, srv: srv, mcp: map[string]*mcp.ClientSession{}}
	m, isErr := mcpTool(t, h.session(key), "learn_facts", map[string]any{"session_id": id})
	if isErr || m["from_seq"] != 6.0 || m["to_seq"] != 8.0 || len(m["facts"].([]any)) != 2 {
		t.Fatalf("learn_facts: %v", m)
	}
	if m, isErr := mcpTool(t, h.session(key), "learn_facts", map[string]any{"session_id": "sess_nosuch"}); !isErr {
		t.Fatalf("learn_facts of no session: %v", m)
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

// TestExtractOnIdle: a profile with memory_extraction.idle_after learns facts from a session on
// its own once the session has been idle that long, once per turn (a later extraction starts
// after the mark, a new turn is learned from again); a profile with idle_after 0s learns only
// when asked; a user who turned learning facts off (PATCH /v1/me/settings) is never learned from.
func TestExtractOnIdle(t *testing.T) {
	t.Parallel()
	llm := newFakeProvider(t, `{"facts": ["Is vegetarian.", "Lives in Lisbon."]}`)
	dir := t.TempDir()
	file := writeFile(t, dir, "agents.yaml", `
providers:
  fake: {kind: openai, base_url: "`+llm.URL+`/v1"}
agents:
  default: {provider: fake, model: m1, memory_extraction: {namespace: learned, idle_after: 1s}}
  asked: {provider: fake, model: m1, memory_extraction: {namespace: asked, idle_after: 0s}}
`)
	srv := startServer(t, t.TempDir(), "--agents", file, "--sweep-interval", "200ms")
	key := localKey(t, srv.data)
	say := func(id, text string) {
		must(t, srv.url, key, "POST", "/v1/sessions/"+id+"/messages", map[string]any{"messages": []map[string]string{
			{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}}}, 201)
	}
	idle := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	asked := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"agent": "asked"}, 201).json(t)["id"].(string)
	say(asked, "I'm vegetarian.")
	say(idle, "I'm vegetarian, and I live in Lisbon.")
	learned := func(ns string) int {
		return len(must(t, srv.url, key, "GET", "/v1/memories?namespace="+ns, nil, 200).json(t)["items"].([]any))
	}
	if !within(30*time.Second, func() bool { return learned("learned") == 2 }) {
		t.Fatalf("no facts were learned from the idle session; logs:\n%s", srv.logs)
	}
	if n := len(llm.requests()); n != 1 {
		t.Fatalf("%d model calls, want the one of the idle session", n)
	}
	if got := must(t, srv.url, key, "POST", "/v1/sessions/"+idle+"/extract", nil, 200).json(t); got["from_seq"] != 2.0 || len(got["facts"].([]any)) != 0 || len(llm.requests()) != 1 {
		t.Fatalf("asked after the idle extraction: %v, %d model calls", got, len(llm.requests()))
	}
	// Bob turned learning facts off: his idle session is passed over, and asking is refused.
	bob := addUser(t, srv.data, "bob")
	if got := must(t, srv.url, bob, "GET", "/v1/me/settings", nil, 200).json(t); got["learn_facts"] != true {
		t.Fatalf("bob's settings: %v", got)
	}
	if got := must(t, srv.url, bob, "PATCH", "/v1/me/settings", map[string]any{"learn_facts": false}, 200).json(t); got["learn_facts"] != false {
		t.Fatalf("bob turned learning off: %v", got)
	}
	must(t, srv.url, bob, "PATCH", "/v1/me/settings", map[string]any{"learn_facts": "no"}, 400)
	must(t, srv.url, bob, "PATCH", "/v1/me/settings", map[string]any{}, 400)
	bobs := must(t, srv.url, bob, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	must(t, srv.url, bob, "POST", "/v1/sessions/"+bobs+"/messages", map[string]any{"messages": []map[string]string{
		{"role": "user", "content": "I'm vegetarian."}}}, 201)
	must(t, srv.url, bob, "POST", "/v1/sessions/"+bobs+"/extract", nil, 400)
	say(idle, "Still in Lisbon.")
	if !within(30*time.Second, func() bool { return strings.Count(srv.logs.String(), "learned facts from an idle session") == 2 }) {
		t.Fatalf("the new turn was not learned from; logs:\n%s", srv.logs)
	}
	if got := must(t, srv.url, key, "POST", "/v1/sessions/"+idle+"/extract", nil, 200).json(t); got["from_seq"] != 4.0 || len(llm.requests()) != 2 {
		t.Fatalf("asked after the second idle extraction: %v, %d model calls", got, len(llm.requests()))
	}
	if n := len(must(t, srv.url, bob, "GET", "/v1/memories?namespace=learned", nil, 200).json(t)["items"].([]any)); n != 0 {
		t.Fatalf("facts were learned from the session of bob, who turned learning off: %d", n)
	}
	if learned("asked") != 0 {
		t.Fatal("a profile with idle_after 0s learned on its own")
	}
	if got := must(t, srv.url, key, "POST", "/v1/sessions/"+asked+"/extract", nil, 200).json(t); got["from_seq"] != 0.0 || len(got["facts"].([]any)) != 2 {
		t.Fatalf("asked to learn from the asked profile's session: %v", got)
	}
}
