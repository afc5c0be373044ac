package agents_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/agents"
)

// TestA2AAgents: a profile selects a remote A2A agent's one tool by glob or by name; the tool is
// unsafe unless the file or the profile says otherwise, its key and headers are read from the
// environment and never shown, and every mistake names its line.
func TestA2AAgents(t *testing.T) {
	t.Parallel()
	src := `providers:
  p: {kind: scripted}
a2a_agents:
  planner: {url: "http://127.0.0.1:8420/a2a/planner/", api_key_env: PLANNER_KEY, call_timeout: 30s}
  reader: {url: "https://reader.example/.well-known/agent-card.json", headers_env: {X-Token: READER_TOKEN}, effect: read}
agents:
  default: {provider: p, tools: ["planner__*", reader__send_message], approval: {planner__send_message: always}}
  other: {provider: p, tools: [read_file], effects: {read_file: idempotent}}
`
	env := map[string]string{"PLANNER_KEY": "ck_secret_planner", "READER_TOKEN": "secret-reader"}
	set, err := agents.Parse("agents.yaml", []byte(src), agents.Options{Getenv: getenv(env), Builtin: builtin()})
	if err != nil {
		t.Fatal(err)
	}
	p := set.Profiles["default"]
	if got := p.A2AAgents(); strings.Join(got, ",") != "planner,reader" || len(p.MCPServers()) != 0 {
		t.Fatalf("A2AAgents %v, MCPServers %v", got, p.MCPServers())
	}
	if h := set.A2AAgents["planner"].Headers(); h["Authorization"] != "Bearer ck_secret_planner" {
		t.Fatalf("planner headers %v", h)
	}
	v, err := set.Agent("default")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"planner__send_message": "unsafe always planner", "reader__send_message": "read never reader"}
	got := map[string]string{}
	for _, tl := range v.Tools {
		got[tl.Name] = string(tl.Effect) + " " + tl.Approval + " " + tl.A2AAgent
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("tool %s: %q, want %q (all %v)", name, got[name], w, got)
		}
	}
	if len(v.A2AAgents) != 2 || v.A2AAgents[0].APIKeyEnv != "PLANNER_KEY" || v.A2AAgents[1].HeadersEnv["X-Token"] != "READER_TOKEN" {
		t.Fatalf("view's A2A agents %+v", v.A2AAgents)
	}
	if o, _ := set.Agent("other"); o.Digest == v.Digest {
		t.Fatal("two different profiles have one digest")
	}
	changed := strings.Replace(src, "call_timeout: 30s", "call_timeout: 31s", 1)
	set2, err := agents.Parse("agents.yaml", []byte(changed), agents.Options{Getenv: getenv(env), Builtin: builtin()})
	if err != nil {
		t.Fatal(err)
	}
	if set2.Profiles["default"].Digest == p.Digest || set2.Profiles["other"].Digest != set.Profiles["other"].Digest {
		t.Fatal("the digest does not follow the A2A agents a profile uses")
	}

	for _, c := range []struct{ src, want string }{
		{strings.Replace(src, `"planner__*"`, `planner__send`, 1), `agents.yaml:7: agents.default.tools[0]: "planner__send" is not the tool of A2A agent planner, which is planner__send_message`},
		{strings.Replace(src, `reader__send_message]`, `readr__send_message]`, 1), `agents.default.tools[1]: "readr__send_message" names tools of MCP server readr, which mcp_servers does not define`},
		{strings.Replace(src, `approval: {planner__send_message: always}`, `approval: {planner__send_mesage: always}`, 1), `agents.default.approval.planner__send_mesage: the agent's tools do not include planner__send_mesage (the tool of A2A agent planner is planner__send_message)`},
		{strings.Replace(src, `effects: {read_file: idempotent}`, `effects: {planner__send_message: read}`, 1), `agents.other.effects.planner__send_message: the agent's tools do not include planner__send_message (no entry of its tools names A2A agent planner)`},
		{strings.Replace(src, "effect: read", "effect: reconcilable", 1), `agents.yaml:5: a2a_agents.reader.effect: must be read, idempotent or unsafe (the default), not "reconcilable"`},
		{strings.Replace(src, `url: "http://127.0.0.1:8420/a2a/planner/"`, `url: "ftp://x"`, 1), `agents.yaml:4: a2a_agents.planner.url: must be the http or https URL`},
		{strings.Replace(src, "api_key_env: PLANNER_KEY", "api_key_env: MISSING_KEY", 1), `a2a_agents.planner.api_key_env: names MISSING_KEY, which is not set in the environment`},
		{strings.Replace(src, "a2a_agents:\n", "mcp_servers:\n  planner: {url: \"http://x/mcp\"}\na2a_agents:\n", 1), `a2a_agents.planner: mcp_servers has a server of the same name`},
		{strings.Replace(src, "call_timeout: 30s", "timeout: 30s", 1), `a2a_agents.planner.timeout: unknown key "timeout"`},
	} {
		if msg := parseErr(t, c.src, env); !strings.Contains(msg, c.want) {
			t.Errorf("error\n  %s\nwant it to contain\n  %s", msg, c.want)
		}
	}
	// A variable of an agent no profile uses is not read.
	unused := strings.Replace(src, `"planner__*", `, "", 1)
	unused = strings.Replace(unused, `approval: {planner__send_message: always}`, `approval: {}`, 1)
	if _, err := agents.Parse("agents.yaml", []byte(unused), agents.Options{Getenv: getenv(map[string]string{"READER_TOKEN": "x"}), Builtin: builtin()}); err != nil {
		t.Fatalf("an unused agent's key was required: %v", err)
	}
}

// TestA2ADocExample: the agents file of docs/A2A.md's "carryon calling other agents" is valid and
// gives its profile the remote agent's tool.
func TestA2ADocExample(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "A2A.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(page), "## carryon calling other agents")
	_, rest, ok2 := strings.Cut(rest, "```yaml\n")
	block, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/A2A.md has no agents file under \"carryon calling other agents\"")
	}
	set, err := agents.Parse("A2A.md", []byte(block), agents.Options{Getenv: getenv(map[string]string{"PLANNER_KEY": "ck_x"}), Builtin: builtin()})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := set.Agent("default"); len(v.A2AAgents) != 1 || v.A2AAgents[0].Tool != "planner__send_message" {
		t.Fatalf("the example's profile: %+v", v)
	}
}
