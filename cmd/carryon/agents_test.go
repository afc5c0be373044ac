package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/model/modeltest"
)

// seenRequest is what a fake provider was sent: the path, the key and the chat request's fields
// the profile decides.
type seenRequest struct {
	Path, Auth string
	Model      string
	System     string
	Tools      []string
}

// fakeProvider is an OpenAI-compatible endpoint that answers every chat completion with reply,
// streamed in the real wire format, and records what it was sent.
type fakeProvider struct {
	*httptest.Server
	mu   sync.Mutex
	seen []seenRequest
}

func newFakeProvider(t *testing.T, reply string) *fakeProvider {
	f := &fakeProvider{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Tools []struct {
				Function struct{ Name string } `json:"function"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		seen := seenRequest{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Model: req.Model}
		for _, m := range req.Messages {
			if m.Role == "system" {
				var s string
				json.Unmarshal(m.Content, &s)
				seen.System += s
			}
		}
		for _, tl := range req.Tools {
			seen.Tools = append(seen.Tools, tl.Function.Name)
		}
		f.mu.Lock()
		f.seen = append(f.seen, seen)
		f.mu.Unlock()
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": ""}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{"content": reply}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
		s.Data(modeltest.OpenAIUsage(10, 3))
		s.Done()
	}))
	t.Cleanup(f.Close)
	return f
}

// requests returns what the provider was sent so far.
func (f *fakeProvider) requests() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seen)
}

// writeFile writes a file under dir and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTwoProfilesTwoProviders is the acceptance test of agent profiles: a real server with an
// agents file of two profiles on two fake OpenAI-compatible providers. Each run's requests reach
// its profile's endpoint, with its key, its model, its instructions after carryon's own system
// prompt and its tools; the other endpoint sees none of them. The runs record the profile and its
// digest, and the list of profiles shows no secret.
func TestTwoProfilesTwoProviders(t *testing.T) {
	t.Parallel()
	a, b := newFakeProvider(t, "Answer from A."), newFakeProvider(t, "Answer from B.")
	dir := t.TempDir()
	file := writeFile(t, dir, "agents.yaml", `
providers:
  alpha: {kind: openai, base_url: "`+a.URL+`/v1", api_key_env: ALPHA_KEY}
  beta: {kind: openai, base_url: "`+b.URL+`/v1", api_key_env: BETA_KEY}
agents:
  default:
    provider: alpha
    model: model-alpha
    instructions: "You are agent Alpha; answer briefly."
    tools: [read_file, update_working_memory]
  researcher:
    provider: beta
    model: model-beta
    instructions: "You are agent Beta; cite sources."
    tools: ["list_*"]
    max_steps: 3
`)
	srv := startServerEnv(t, t.TempDir(), []string{"ALPHA_KEY=sk-alpha-secret", "BETA_KEY=sk-beta-secret"}, "--agents", file)
	key := localKey(t, srv.data)

	list := must(t, srv.url, key, "GET", "/v1/agents", nil, 200)
	if bytes.Contains(list.body, []byte("sk-alpha-secret")) || bytes.Contains(list.body, []byte("sk-beta-secret")) {
		t.Fatalf("GET /v1/agents shows a key: %s", list.body)
	}
	var agentList struct {
		Items []struct{ Name, Model, Digest string }
	}
	json.Unmarshal(list.body, &agentList)
	digests := map[string]string{}
	for _, it := range agentList.Items {
		digests[it.Name] = it.Digest
	}
	if len(agentList.Items) != 2 || digests["default"] == "" || digests["researcher"] == "" || digests["default"] == digests["researcher"] {
		t.Fatalf("agents: %s", list.body)
	}
	must(t, srv.url, "", "GET", "/v1/agents", nil, 401)

	// A session that names no agent runs the default profile, on alpha.
	chat := must(t, srv.url, key, "POST", "/v1/chat", map[string]any{"message": "hello"}, 200).json(t)
	if chat["reply"] != "Answer from A." {
		t.Fatalf("default chat: %v", chat)
	}
	run := must(t, srv.url, key, "GET", "/v1/runs/"+chat["run_id"].(string), nil, 200).json(t)
	if run["agent"] != "default" || run["agent_digest"] != digests["default"] || run["model"] != "model-alpha" {
		t.Fatalf("default run: %v", run)
	}
	if got := b.requests(); len(got) != 0 {
		t.Fatalf("beta was called for the default profile: %+v", got)
	}
	wantSeen(t, a.requests(), seenRequest{Path: "/v1/chat/completions", Auth: "Bearer sk-alpha-secret", Model: "model-alpha",
		System: "You are agent Alpha; answer briefly.", Tools: []string{"read_file", "update_working_memory"}})

	// A session bound to the researcher runs on beta.
	sess := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"agent": "researcher"}, 201).json(t)
	if sess["agent"] != "researcher" {
		t.Fatalf("session: %v", sess)
	}
	sid := sess["id"].(string)
	ctxPreview := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/context", nil, 200)
	if !bytes.Contains(ctxPreview.body, []byte("You are agent Beta; cite sources.")) {
		t.Fatalf("the researcher's context lacks its instructions: %s", ctxPreview.body)
	}
	nA := len(a.requests())
	r := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "find it"}, 202).json(t)
	done := waitRun(t, srv, key, r["id"].(string))
	if done["status"] != "succeeded" || done["reply"] != "Answer from B." || done["agent"] != "researcher" || done["agent_digest"] != digests["researcher"] || done["model"] != "model-beta" {
		t.Fatalf("researcher run: %v", done)
	}
	if len(a.requests()) != nA {
		t.Fatal("alpha was called for the researcher")
	}
	if out := cli(t, srv, "runs", "show", r["id"].(string)); !strings.Contains(out, "agent    researcher  "+digests["researcher"][:len("sha256:")+12]) {
		t.Fatalf("runs show does not say the profile:\n%s", out)
	}
	wantSeen(t, b.requests(), seenRequest{Path: "/v1/chat/completions", Auth: "Bearer sk-beta-secret", Model: "model-beta",
		System: "You are agent Beta; cite sources.", Tools: []string{"list_files"}})

	// A run on the researcher's session may name the default profile: it goes to alpha.
	nB := len(b.requests())
	r = must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "now you", "agent": "default"}, 202).json(t)
	if done := waitRun(t, srv, key, r["id"].(string)); done["reply"] != "Answer from A." || done["agent"] != "default" {
		t.Fatalf("run naming default: %v", done)
	}
	if len(b.requests()) != nB || len(a.requests()) != nA+1 {
		t.Fatalf("the run naming default reached alpha %d and beta %d times", len(a.requests())-nA, len(b.requests())-nB)
	}

	// An unknown profile is refused, names the known ones, and stores nothing.
	bad := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "x", "agent": "writer"}, 400).json(t)
	if d, _ := bad["detail"].(string); !strings.Contains(d, "default, researcher") {
		t.Fatalf("detail: %v", bad)
	}
	runs := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/runs", nil, 200).json(t)
	if n := len(runs["items"].([]any)); n != 2 {
		t.Fatalf("%d runs after a refused start, want 2", n)
	}
}

// wantSeen checks that every request a provider was sent matches want; want.System is a part
// the system prompt must hold after carryon's own, which it must hold too.
func wantSeen(t *testing.T, got []seenRequest, want seenRequest) {
	t.Helper()
	if len(got) == 0 {
		t.Fatal("the provider was sent nothing")
	}
	for _, g := range got {
		if g.Path != want.Path || g.Auth != want.Auth || g.Model != want.Model || !slices.Equal(g.Tools, want.Tools) {
			t.Fatalf("request %+v, want %+v", g, want)
		}
		i, j := strings.Index(g.System, contextbuild.DefaultSystemPrompt), strings.Index(g.System, want.System)
		if i < 0 || j < i {
			t.Fatalf("system prompt %q lacks carryon's own prompt followed by %q", g.System, want.System)
		}
	}
}

// TestAgentsFileFromEnv: CARRYON_AGENTS names the file as --agents does, and a server whose file
// is wrong does not start: it says the line and the key and exits 1.
func TestAgentsFileFromEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := writeFile(t, dir, "good.yaml", "providers:\n  off: {kind: scripted}\nagents:\n  default: {provider: off}\n  helper: {provider: off, model: helper-model}\n")
	srv := startServerEnv(t, t.TempDir(), []string{"CARRYON_AGENTS=" + good}, "--max-steps", "3")
	key := localKey(t, srv.data)
	if !within(10*time.Second, func() bool { return strings.Contains(srv.logs.String(), "these flags are not used") }) ||
		!strings.Contains(srv.logs.String(), "--max-steps") {
		t.Fatalf("no warning that --max-steps is not used with an agents file:\n%s", srv.logs)
	}
	list := must(t, srv.url, key, "GET", "/v1/agents", nil, 200).json(t)
	if n := len(list["items"].([]any)); n != 2 {
		t.Fatalf("agents from CARRYON_AGENTS: %v", list)
	}
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"agent": "helper"}, 201).json(t)["id"].(string)
	r := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "hi"}, 202).json(t)
	if done := waitRun(t, srv, key, r["id"].(string)); done["status"] != "succeeded" || done["model"] != "helper-model" {
		t.Fatalf("helper run: %v", done)
	}

	bad := writeFile(t, dir, "bad.yaml", "providers:\n  off: {kind: scripted}\nagents:\n  default:\n    provider: of\n")
	var stderr bytes.Buffer
	err := run(t.Context(), []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, envMap(map[string]string{"CARRYON_AGENTS": bad}), nil, io.Discard, &stderr)
	if code := report(err, &stderr); code != 1 {
		t.Fatalf("exit %d for a wrong agents file", code)
	}
	if want := "carryon: " + bad + `:5: agents.default.provider: "of" is not in providers (known: off) (invalid_request)`; strings.TrimSpace(stderr.String()) != want {
		t.Fatalf("stderr %q\nwant   %q", stderr.String(), want)
	}
}

// TestAgentsCheck runs `carryon agents check` on a good file, a wrong one and a missing secret.
// It starts the file's MCP server (this binary over stdio), lists its tools and prints the
// effect class and approval every tool runs with, MCP tools included; a key that matches none of
// the listed tools is an error with its line and the nearest names.
func TestAgentsCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	entry, _ := counterMCP(t, filepath.Join(dir, "count"))
	entry = strings.TrimSuffix(entry, "}") + ", call_timeout: 10s}"
	const profiles = `
agents:
  default:
    provider: claude
    tools: [read_file, "counter__*"]
    effects: {counter__peek: read}
    approval: {counter__bump: always}
  helper:
    provider: claude
    tools: [list_files, "counter__*"]
    approval: {"*": always, "counter__p*": never}
    context_budget: 20000
    compaction: {threshold: 0.75}
`
	file := writeFile(t, dir, "agents.yaml", "providers:\n  claude: {kind: anthropic, api_key_env: MY_CLAUDE_KEY}\nmcp_servers:\n  "+entry+profiles)
	check := func(file string, args ...string) (string, error) {
		var out bytes.Buffer
		err := run(t.Context(), append([]string{"agents", "check", file}, args...), envMap(map[string]string{"MY_CLAUDE_KEY": "sk-ant-xyz"}), nil, &out, io.Discard)
		return out.String(), err
	}
	out, err := check(file)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		rows[strings.Join(strings.Fields(line), " ")] = true
	}
	for _, want := range []string{"AGENT TOOL FROM EFFECT APPROVAL",
		"default read_file built in read never",
		"default counter__bump counter (stdio) unsafe always",
		"default counter__peek counter (stdio) read never",
		"helper list_files built in read always (*)",
		"helper counter__bump counter (stdio) unsafe always (*)",
		"helper counter__peek counter (stdio) unsafe never (counter__p*)",
	} {
		if !rows[want] {
			t.Fatalf("check output lacks the row %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"2 agent profiles, valid\n", "claude (anthropic)", "claude-sonnet-4-5", "sha256:", "COMPACTION", " over 15000 ", " off "} {
		if !strings.Contains(out, want) {
			t.Fatalf("check output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "sk-ant-xyz") {
		t.Fatalf("check printed the key:\n%s", out)
	}
	out, err = check(file, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []struct {
			Name             string
			CompactThreshold int `json:"compact_threshold"`
			Tools            []struct {
				Name, Effect, Approval string
				MCPServer              string `json:"mcp_server"`
			}
			MCPServers []struct {
				Name               string
				EnvKeys            []string `json:"env_keys"`
				CallTimeoutSeconds float64  `json:"call_timeout_seconds"`
			} `json:"mcp_servers"`
		}
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Items) != 2 || len(list.Items[0].MCPServers) != 1 ||
		list.Items[0].MCPServers[0].CallTimeoutSeconds != 10 || !slices.Equal(list.Items[0].MCPServers[0].EnvKeys, []string{counterServerEnv}) ||
		list.Items[0].CompactThreshold != 0 || list.Items[1].CompactThreshold != 15000 ||
		len(list.Items[0].Tools) != 3 || list.Items[0].Tools[1].Name != "counter__bump" || list.Items[0].Tools[1].MCPServer != "counter" || list.Items[0].Tools[1].Approval != "always" {
		t.Fatalf("check --json: %v %s", err, out)
	}

	// A key that matches none of the tools the server lists: its line, and the nearest name.
	typo := writeFile(t, dir, "typo.yaml", strings.Replace(strings.Replace(string(mustRead(t, file)), "counter__bump: always", "counter__bmup: always", 1), "counter__peek: read", "counter__peak: read", 1))
	var stderr bytes.Buffer
	_, err = check(typo)
	if code := report(err, &stderr); code != 1 || strings.TrimSpace(stderr.String()) != "carryon: "+typo+":9: agents.default.effects.counter__peak: the agent's tools do not include counter__peak: MCP server counter lists no such tool (nearest: counter__peek); "+
		typo+":10: agents.default.approval.counter__bmup: the agent's tools do not include counter__bmup: MCP server counter lists no such tool (nearest: counter__bump) (invalid_request)" {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	// --no-mcp checks the rest without the server, and says what it could not list.
	out, err = check(typo, "--no-mcp")
	if err != nil || !strings.Contains(out, "valid (the MCP servers' tools not listed: --no-mcp)") ||
		!strings.Contains(strings.Join(strings.Fields(out), " "), "default counter__bmup counter (stdio), not listed unsafe always") {
		t.Fatalf("--no-mcp: %v\n%s", err, out)
	}
	// A server that cannot start: named, with the way around it.
	down := writeFile(t, dir, "down.yaml", "providers:\n  claude: {kind: anthropic, api_key_env: MY_CLAUDE_KEY}\nmcp_servers:\n  counter: {command: ["+dir+"/no-such-server]}"+profiles)
	stderr.Reset()
	_, err = check(down)
	if code := report(err, &stderr); code != 1 || !strings.Contains(stderr.String(), "MCP server counter: ") || !strings.Contains(stderr.String(), "with --no-mcp the rest of the file is checked without them") {
		t.Fatalf("a server that cannot start: exit %d, stderr %q", code, stderr.String())
	}

	// Without the key: the variable is named, the exit status is 1.
	stderr.Reset()
	err = run(t.Context(), []string{"agents", "check", file}, envMap(nil), nil, io.Discard, io.Discard)
	if code := report(err, &stderr); code != 1 || !strings.Contains(stderr.String(), "agents.yaml:2: providers.claude.api_key_env: names MY_CLAUDE_KEY, which is not set") ||
		!strings.HasSuffix(strings.TrimSpace(stderr.String()), "(invalid_request)") || !strings.HasPrefix(stderr.String(), "carryon: ") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	// A command line it does not take is a usage error (exit 2); --help needs no server or file.
	stderr.Reset()
	if code := report(run(t.Context(), []string{"agents", "check"}, envMap(nil), nil, io.Discard, io.Discard), &stderr); code != 2 {
		t.Fatalf("agents check without a file: exit %d", code)
	}
	var help bytes.Buffer
	if err := run(t.Context(), []string{"agents", "--help"}, envMap(nil), nil, &help, io.Discard); err != nil || !strings.Contains(help.String(), "carryon agents check agents.yaml") {
		t.Fatalf("help: %v\n%s", err, help.String())
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
