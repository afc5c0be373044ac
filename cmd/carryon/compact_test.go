package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
)

// `carryon sessions compact` against the real server whose profile's model (an OpenAI-compatible
// fake) writes the summary: the compaction is stored, listed, and the context sends it in place
// of the messages it covers.
func TestSessionsCompactCommand(t *testing.T) {
	t.Parallel()
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
	data := t.TempDir()
	srv := startServerEnv(t, data, []string{"ECHO_KEY=sk-echo"}, "--agents", file)
	key := localKey(t, data)
	id := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "long"}, 201).json(t)["id"].(string)
	must(t, srv.url, key, "POST", "/v1/sessions/"+id+"/messages", map[string]any{"messages": []map[string]string{
		{"role": "user", "content": "the plan is ZEBRA"}, {"role": "assistant", "content": "noted"},
		{"role": "user", "content": "latest question"}}}, 201)

	out := cli(t, srv, "sessions", "compact", id, "--keep-last", "1", "--expected-version", "2")
	if !strings.Contains(out, "compacted at version 3: messages 1-2") || !strings.Contains(out, "You said: user: the plan is ZEBRA") {
		t.Fatalf("sessions compact:\n%s", out)
	}
	var page carryon.CompactionPage
	if err := json.Unmarshal([]byte(cli(t, srv, "sessions", "compactions", id, "--json")), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].Model != "echo-1" || page.Items[0].CoversTo != 2 {
		t.Fatalf("compactions: %+v", page.Items)
	}
	cx := must(t, srv.url, key, "GET", "/v1/sessions/"+id+"/context", nil, 200).json(t)
	if sys := cx["system"].(string); !strings.Contains(sys, "ZEBRA") || cx["first_seq"] != 3.0 {
		t.Fatalf("the context does not send the summary in place of messages 1-2: first_seq %v, system %q", cx["first_seq"], sys)
	}
	// Stale: refused, nothing written.
	must(t, srv.url, key, "POST", "/v1/sessions/"+id+"/compact", map[string]any{"expected_version": 2}, 409)
	if n := len(must(t, srv.url, key, "GET", "/v1/sessions/"+id+"/compactions", nil, 200).json(t)["items"].([]any)); n != 1 {
		t.Fatalf("%d compactions after a refused one, want 1", n)
	}
}
