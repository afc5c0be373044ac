package agents_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/agents"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/longtermtool"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
)

// builtin are the tools a server compiles in (as cmd/carryon's builtinTools, without test tools).
func builtin() []tool.Tool {
	return append(append(workspace.Tools(), tool.UpdateWorkingMemory()), longtermtool.Tools()...)
}

// secrets are the values of the variables the example names; none may appear in a view or digest.
var secrets = map[string]string{
	"OLLAMA_KEY": "sk-ollama-secret-1", "ANTHROPIC_API_KEY": "sk-ant-secret-2", "SEARCH_TOKEN": "Bearer search-secret-3",
}

func getenv(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func load(t *testing.T, name string, env map[string]string) *agents.Set {
	t.Helper()
	set, err := agents.Load(filepath.Join("testdata", name), agents.Options{Getenv: getenv(env), Builtin: builtin()})
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return set
}

func parseErr(t *testing.T, src string, env map[string]string) string {
	t.Helper()
	_, err := agents.Parse("agents.yaml", []byte(src), agents.Options{Getenv: getenv(env), Builtin: builtin()})
	if err == nil {
		t.Fatalf("no error for:\n%s", src)
	}
	if carryon.ErrorCode(err) != carryon.EINVALID {
		t.Fatalf("code %q, want %s: %v", carryon.ErrorCode(err), carryon.EINVALID, err)
	}
	e, _ := carryon.AsError(err)
	return e.Message
}

func TestExample(t *testing.T) {
	t.Parallel()
	set := load(t, "example.yaml", secrets)
	if got := set.Names(); !slices.Equal(got, []string{"default", "offline", "researcher"}) {
		t.Fatalf("names %v", got)
	}
	def, err := set.Profile("")
	if err != nil || def.Name != "default" || def.Model != "llama3.1" || def.MaxSteps != 12 {
		t.Fatalf("default profile %+v, %v", def, err)
	}
	if got := def.MCPServers(); !slices.Equal(got, []string{"files"}) {
		t.Fatalf("default's MCP servers %v", got)
	}
	if def.Effects["files__read_text_file"] != carryon.EffectRead || def.ApprovalOf("files__write_file") != carryon.ApprovalAlways || def.ApprovalOf("read_file") != carryon.ApprovalNever {
		t.Fatalf("effects %v approval %v", def.Effects, def.Approval)
	}
	search := set.MCPServers["search"]
	if search.Headers()["Authorization"] != secrets["SEARCH_TOKEN"] || search.CallTimeout != 20*time.Second || search.Transport() != "http" {
		t.Fatalf("search server %+v", search)
	}
	if set.MCPServers["files"].Transport() != "stdio" {
		t.Fatal("files is a stdio server")
	}
	r, _ := set.Profile("researcher")
	if r.Model != "claude-sonnet-4-5" || r.MaxSteps != agents.DefaultMaxSteps || r.ContextBudget != agents.DefaultContextBudget {
		t.Fatalf("researcher's defaults: %+v", r)
	}
	// A profile without tools has every built-in one.
	off, _ := set.Profile("offline")
	if len(off.Tools) != len(builtin()) {
		t.Fatalf("offline tools %v", off.Tools)
	}

	list, err := set.ListAgents(carryon.NewContextWithUser(t.Context(), &carryon.User{ID: "usr_1"}))
	if err != nil || len(list.Items) != 3 {
		t.Fatalf("list %+v %v", list, err)
	}
	b, _ := json.Marshal(list)
	for name, v := range secrets {
		if strings.Contains(string(b), v) || strings.Contains(string(b), strings.TrimPrefix(v, "Bearer ")) {
			t.Fatalf("the list shows the value of %s: %s", name, b)
		}
	}
	for _, want := range []string{`"headers_env":{"Authorization":"SEARCH_TOKEN"}`, `"name":"write_file","effect":"reconcilable","approval":"never"`, `"name":"read_file","effect":"idempotent"`} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("the list lacks %s: %s", want, b)
		}
	}
	if _, err := set.ListAgents(t.Context()); carryon.ErrorCode(err) != carryon.EUNAUTHORIZED {
		t.Fatalf("a list without a caller: %v", err)
	}
}

func TestJSONFile(t *testing.T) {
	t.Parallel()
	set := load(t, "example.json", nil)
	def, _ := set.Profile("default")
	if def.MaxSteps != 3 || set.Providers["offline"].Delay != 10*time.Millisecond {
		t.Fatalf("default %+v provider %+v", def, set.Providers["offline"])
	}
	a, _ := set.Agent("default")
	var names []string
	for _, tl := range a.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"read_file"}) {
		t.Fatalf("read_* selects %v", names)
	}
}

func TestUnknownProfile(t *testing.T) {
	t.Parallel()
	set := load(t, "example.yaml", secrets)
	_, err := set.Agent("writer")
	if carryon.ErrorCode(err) != carryon.EINVALID || !strings.Contains(err.Error(), "default, offline, researcher") {
		t.Fatalf("unknown profile: %v", err)
	}
}

// TestCompactionThreshold: an agent's automatic compaction threshold, in tokens or as a share of
// its context budget, resolves to tokens (in its public view too), changes its digest, and is off without the key (with
// the digest it had before the key existed).
func TestCompactionThreshold(t *testing.T) {
	t.Parallel()
	const src = "providers:\n  p: {kind: scripted}\nagents:\n  default: {provider: p}\n" +
		"  tokens: {provider: p, compaction: {threshold_tokens: 12000}}\n" +
		"  share: {provider: p, context_budget: 10000, compaction: {threshold: 0.75}}\n"
	set, err := agents.Parse("agents.yaml", []byte(src), agents.Options{Builtin: builtin()})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"default": 0, "tokens": 12000, "share": 7500} {
		if got := set.Profiles[name].CompactThreshold; got != want {
			t.Errorf("%s: threshold %d, want %d", name, got, want)
		}
		// GET /v1/agents answers the views.
		if a, err := set.Agent(name); err != nil || a.CompactThreshold != want {
			t.Errorf("%s: the view's threshold %v, want %d (%v)", name, a, want, err)
		}
	}
	plain, err := agents.Parse("agents.yaml", []byte("providers:\n  p: {kind: scripted}\nagents:\n  default: {provider: p}\n  tokens: {provider: p}\n"), agents.Options{Builtin: builtin()})
	if err != nil {
		t.Fatal(err)
	}
	if set.Profiles["tokens"].Digest == plain.Profiles["tokens"].Digest || set.Profiles["default"].Digest != plain.Profiles["default"].Digest {
		t.Errorf("digests: with a threshold %s, without %s; default %s and %s", set.Profiles["tokens"].Digest, plain.Profiles["tokens"].Digest,
			set.Profiles["default"].Digest, plain.Profiles["default"].Digest)
	}
}

func TestFileErrors(t *testing.T) {
	t.Parallel()
	const good = "providers:\n  p: {kind: scripted}\nagents:\n  default:\n    provider: p\n"
	cases := []struct {
		name, src string
		env       map[string]string
		want      []string
	}{
		{"unknown key", good + "    temperature: 0.2\n", nil, []string{"agents.yaml:6: agents.default.temperature: unknown key \"temperature\""}},
		{"unknown top key", good + "tools: []\n", nil, []string{"agents.yaml:6:", "unknown key \"tools\""}},
		{"unknown provider", "providers:\n  p: {kind: scripted}\nagents:\n  default:\n    provider: q\n", nil,
			[]string{`agents.yaml:5: agents.default.provider: "q" is not in providers (known: p)`}},
		{"unknown kind", "providers:\n  p: {kind: gemini}\nagents:\n  default: {provider: p}\n", nil,
			[]string{`agents.yaml:2: providers.p.kind: must be openai, anthropic or scripted, not "gemini"`}},
		{"missing secret", "providers:\n  p: {kind: anthropic, api_key_env: MY_CLAUDE_KEY}\nagents:\n  default: {provider: p}\n", nil,
			[]string{"agents.yaml:2: providers.p.api_key_env: names MY_CLAUDE_KEY, which is not set"}},
		{"missing header secret", good + "    tools: [s__*]\nmcp_servers:\n  s: {url: \"https://x.example/mcp\", headers_env: {Authorization: S_TOKEN}}\n", nil,
			[]string{"agents.yaml:8: mcp_servers.s.headers_env.Authorization: names S_TOKEN, which is not set"}},
		{"wrong type", good + "    max_steps: many\n", nil, []string{"agents.yaml:6: agents.default.max_steps: must be a number, not a string"}},
		{"zero steps", good + "    max_steps: 0\n", nil, []string{"agents.yaml:6: agents.default.max_steps: must be 1 or more, not 0"}},
		{"negative budget", good + "    context_budget: -5\n", nil, []string{"agents.default.context_budget: must be 1 or more"}},
		{"compaction both", good + "    compaction: {threshold_tokens: 100, threshold: 0.5}\n", nil,
			[]string{"agents.yaml:6: agents.default.compaction: takes threshold_tokens (a number of tokens) or threshold (a share of context_budget), not both"}},
		{"compaction empty", good + "    compaction: {}\n", nil, []string{"agents.default.compaction: needs threshold_tokens"}},
		{"compaction over budget", good + "    context_budget: 1000\n    compaction: {threshold_tokens: 1001}\n", nil,
			[]string{"agents.yaml:7: agents.default.compaction.threshold_tokens: must be from 1 to the agent's context_budget (1000), not 1001"}},
		{"compaction share", good + "    compaction: {threshold: 1.5}\n", nil,
			[]string{"agents.default.compaction.threshold: must be a share of context_budget above 0 and at most 1, such as 0.8, not 1.5"}},
		{"compaction unknown key", good + "    compaction: {tokens: 5}\n", nil, []string{`unknown key "tokens"`}},
		{"memory_extraction namespace", good + "    memory_extraction: {namespace: Bad NS}\n", nil, []string{"agents.default.memory_extraction.namespace: namespace \"Bad NS\" is not valid"}},
		{"embeddings provider", good + "embeddings: {provider: nosuch, model: m}\n", nil, []string{"embeddings.provider: must name a provider of the file"}},
		{"bad effect", good + "    tools: [read_file]\n    effects: {read_file: harmless}\n", nil,
			[]string{`agents.yaml:7: agents.default.effects.read_file: must be read, idempotent, reconcilable or unsafe, not "harmless"`}},
		{"bad approval", good + "    tools: [read_file]\n    approval: {read_file: sometimes}\n", nil,
			[]string{`agents.default.approval.read_file: must be always or never, not "sometimes"`}},
		{"effect of a tool not selected", good + "    tools: [read_file]\n    effects: {write_file: read}\n", nil,
			[]string{"agents.default.effects.write_file: the agent's tools do not include write_file"}},
		{"reconcilable MCP tool", good + "    tools: [s__*]\n    effects: {s__put: reconcilable}\nmcp_servers:\n  s: {command: [srv]}\n", nil,
			[]string{"agents.default.effects.s__put: reconcilable needs a tool that can check the world"}},
		{"bad glob", good + "    tools: [\"read_[\"]\n", nil, []string{`agents.yaml:6: agents.default.tools[0]: "read_[" is not a glob`}},
		{"unknown tool", good + "    tools: [reed_file]\n", nil, []string{`agents.default.tools[0]: "reed_file" is not a built-in tool`}},
		{"unknown server", good + "    tools: [files__*]\n", nil, []string{`"files__*" names tools of MCP server files, which mcp_servers does not define`}},
		{"server with both", good + "mcp_servers:\n  s: {command: [a], url: \"http://x\"}\n", nil, []string{"agents.yaml:7: mcp_servers.s: takes command (a stdio server) or url"}},
		{"server with neither", good + "mcp_servers:\n  s: {env: {A: b}}\n", nil, []string{"mcp_servers.s: needs command (a stdio server) or url"}},
		{"bad timeout", good + "mcp_servers:\n  s: {command: [a], call_timeout: 0s}\n", nil, []string{"mcp_servers.s.call_timeout: must be more than 0"}},
		{"timeout not a duration", good + "mcp_servers:\n  s: {command: [a], call_timeout: soon}\n", nil, []string{"agents.yaml:7: mcp_servers.s.call_timeout:"}},
		{"no calls at once", good + "mcp_servers:\n  s: {command: [a], max_concurrent_calls: 0}\n", nil,
			[]string{"agents.yaml:7: mcp_servers.s.max_concurrent_calls: must be 1 or more, not 0"}},
		{"no default", "providers:\n  p: {kind: scripted}\nagents:\n  writer: {provider: p}\n", nil, []string{"agents.yaml:3: agents: no agent is named default"}},
		{"no agents", "providers:\n  p: {kind: scripted}\n", nil, []string{"agents: the file defines no agent"}},
		{"syntax", "agents:\n  default: {provider: p\n", nil, []string{"agents.yaml:2"}},
		{"duplicate key", good + "  default: {provider: p}\n", nil, []string{"agents.yaml:6:", `"default" already defined`}},
		{"unknown provider key", "providers:\n  p: {kind: openai, base_url: \"http://x\", apikey: K}\nagents:\n  default: {provider: p}\n", nil,
			[]string{`agents.yaml:2: providers.p.apikey: unknown key "apikey"`}},
		{"not a mapping", "- a\n- b\n", nil, []string{"agents.yaml:1:", "mapping is expected"}},
		{"unknown server key", good + "mcp_servers:\n  s: {commmand: [a]}\n", nil, []string{`agents.yaml:7: mcp_servers.s.commmand: unknown key "commmand"`}},
		{"unknown key in JSON", `{"providers": {"p": {"kind": "scripted"}}, "agents": {"default": {"provider": "p", "approvals": {"x": "always"}}}}`, nil,
			[]string{`agents.default.approvals: unknown key "approvals"`}},
		{"unknown key in a second document", good + "---\nagents:\n  default: {provider: p, temperature: 1}\n", nil,
			[]string{`agents.yaml:8: agents.default.temperature: unknown key "temperature"`}},
		{"unknown key through a merge", "providers:\n  p: {kind: scripted, <<: {colour: red}}\nagents:\n  default: {provider: p}\n", nil,
			[]string{`unknown key "colour"`}},
		{"two problems in order", "providers:\n  p: {kind: openai}\nagents:\n  default:\n    provider: p\n    max_steps: 0\n", nil,
			[]string{"agents.yaml:2: providers.p: needs api_key_env", "; agents.yaml:6: agents.default.max_steps"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			msg := parseErr(t, c.src, c.env)
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Fatalf("error %q\nlacks %q", msg, w)
				}
			}
		})
	}
}

func TestDigest(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("testdata", "example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	digests := func(src string, env map[string]string) map[string]string {
		set, err := agents.Parse("a.yaml", []byte(src), agents.Options{Getenv: getenv(env), Builtin: builtin()})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, n := range set.Names() {
			a, _ := set.Agent(n)
			if !strings.HasPrefix(a.Digest, "sha256:") || len(a.Digest) != len("sha256:")+64 {
				t.Fatalf("digest %q", a.Digest)
			}
			out[n] = a.Digest
		}
		return out
	}
	base := digests(string(src), secrets)
	if base["default"] == base["researcher"] {
		t.Fatal("two profiles defined differently share a digest")
	}
	// Same definition, other secret values and another layout: the same digests.
	other := map[string]string{"OLLAMA_KEY": "x", "ANTHROPIC_API_KEY": "y", "SEARCH_TOKEN": "z"}
	if got := digests("# a comment\n"+string(src), other); !equalMaps(got, base) {
		t.Fatalf("digests changed with secret values or comments: %v vs %v", got, base)
	}
	// A changed instruction changes that profile's digest only.
	changed := digests(strings.Replace(string(src), "Find sources", "Find two sources", 1), secrets)
	if changed["researcher"] == base["researcher"] || changed["default"] != base["default"] {
		t.Fatalf("after changing researcher: %v vs %v", changed, base)
	}
	// A changed MCP server changes the digest of the profiles that use it.
	moved := digests(strings.Replace(string(src), "/srv/data", "/srv/other", 1), secrets)
	if moved["default"] == base["default"] || moved["researcher"] != base["researcher"] {
		t.Fatalf("after moving files: %v vs %v", moved, base)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestFromFlags(t *testing.T) {
	t.Parallel()
	set, err := agents.FromFlags(agents.Flags{Provider: "scripted", MaxSteps: 5, ContextBudget: 9000, ScriptedDelay: time.Millisecond}, agents.Options{Builtin: builtin()})
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Names(); !slices.Equal(got, []string{"default"}) {
		t.Fatalf("names %v", got)
	}
	a, _ := set.Agent("")
	if a.Model != "scripted" || a.ProviderKind != "scripted" || a.MaxSteps != 5 || a.ContextBudget != 9000 || len(a.Tools) != len(builtin()) || a.Digest == "" {
		t.Fatalf("default from flags %+v", a)
	}
	if set.Providers["scripted"].Delay != time.Millisecond {
		t.Fatal("the scripted delay is lost")
	}
	// As before agents files: 0 takes the defaults.
	set, _ = agents.FromFlags(agents.Flags{Provider: "scripted"}, agents.Options{Builtin: builtin()})
	if p, _ := set.Profile("default"); p.MaxSteps != agents.DefaultMaxSteps || p.ContextBudget != agents.DefaultContextBudget {
		t.Fatalf("zero flags %+v", p)
	}
	env := map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
	set, err = agents.FromFlags(agents.Flags{Provider: "openai", Model: "gpt-test", MaxSteps: 12, ContextBudget: 16000}, agents.Options{Getenv: getenv(env)})
	if err != nil {
		t.Fatal(err)
	}
	if p := set.Providers["openai"]; p.BaseURL != env["OPENAI_BASE_URL"] || p.APIKeyEnv != "OPENAI_API_KEY" {
		t.Fatalf("openai provider from the environment: %+v", p)
	}
	if _, err := agents.FromFlags(agents.Flags{Provider: "anthropic"}, agents.Options{Getenv: getenv(nil)}); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("anthropic without a key: %v", err)
	}
	if _, err := agents.FromFlags(agents.Flags{Provider: "gemini"}, agents.Options{}); carryon.ErrorCode(err) != carryon.EINVALID {
		t.Fatalf("unknown provider: %v", err)
	}
}

// source is a tool.Source offering fixed tools, or failing.
type source struct {
	tools []tool.Tool
	err   error
}

func (s source) Tools(context.Context) ([]tool.Tool, error) { return s.tools, s.err }

// named is a tool of an MCP server, unsafe by default.
type named string

func (n named) Name() string              { return string(n) }
func (named) Description() string         { return "a remote tool" }
func (named) Schema() json.RawMessage     { return json.RawMessage(`{"type":"object"}`) }
func (named) Effect() carryon.EffectClass { return carryon.EffectUnsafe }
func (named) Call(context.Context, tool.Call) (tool.Result, error) {
	return tool.Result{Content: "ok"}, nil
}

func TestToolsFromSources(t *testing.T) {
	t.Parallel()
	set := load(t, "example.yaml", secrets)
	def, _ := set.Profile("default")
	sources := map[string]tool.Source{
		"files":  source{tools: []tool.Tool{named("files__write_file"), named("files__read_text_file"), named("other__x")}},
		"search": source{tools: []tool.Tool{named("search__web_search")}}, // default does not use it
	}
	got, missing, err := agents.Tools(t.Context(), def, builtin(), sources)
	if err != nil || missing != nil {
		t.Fatal(err, missing)
	}
	var names []string
	effects := map[string]carryon.EffectClass{}
	for _, tl := range got {
		names = append(names, tl.Name())
		effects[tl.Name()] = tl.Effect()
	}
	want := []string{"read_file", "write_file", "update_working_memory", "files__read_text_file", "files__write_file"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	if effects["files__read_text_file"] != carryon.EffectRead || effects["files__write_file"] != carryon.EffectUnsafe {
		t.Fatalf("effects %v", effects)
	}
	// write_file keeps reconciling under an override.
	r, _ := set.Profile("researcher")
	got, _, _ = agents.Tools(t.Context(), r, builtin(), nil)
	for _, tl := range got {
		if tl.Name() == "read_file" && tl.Effect() != carryon.EffectIdempotent {
			t.Fatalf("read_file's effect %s, want the override", tl.Effect())
		}
	}
	// A source that fails leaves its tools out and says so.
	down := errors.New("connection refused")
	got, missing, err = agents.Tools(t.Context(), def, builtin(), map[string]tool.Source{"files": source{err: down}})
	if err != nil || !errors.Is(missing, down) || !strings.Contains(missing.Error(), "MCP server files") || len(got) != 3 {
		t.Fatalf("a failing source: %d tools, %v, %v", len(got), missing, err)
	}
	// A source's tool may not take a built-in's name.
	got, missing, err = agents.Tools(t.Context(), def, builtin(), map[string]tool.Source{"files": source{tools: []tool.Tool{
		named("read_file"), named("files__write_file"), named("files__read_text_file")}}})
	if err != nil || missing == nil || !strings.Contains(missing.Error(), "read_file") || len(got) != 5 || got[0].Effect() != carryon.EffectRead {
		t.Fatalf("a source's tool named like a built-in: %d tools, %v, %v", len(got), missing, err)
	}
}

func TestEffectOverrideKeepsReconciler(t *testing.T) {
	t.Parallel()
	src := "providers:\n  p: {kind: scripted}\nagents:\n  default:\n    provider: p\n    tools: [write_file]\n    effects: {write_file: unsafe}\n"
	set, err := agents.Parse("a.yaml", []byte(src), agents.Options{Builtin: builtin()})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Profile("default")
	got := agents.Select(p, builtin())
	if len(got) != 1 || got[0].Effect() != carryon.EffectUnsafe {
		t.Fatalf("selected %v", got)
	}
	if _, ok := got[0].(tool.Reconciler); !ok {
		t.Fatal("the override hides write_file's Reconcile")
	}
}

// TestDocsExample: the complete example of docs/AGENTS.md is a valid file, with the digests the
// page shows (the same definitions as testdata/example.yaml).
func TestDocsExample(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "AGENTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(page), "## A complete example")
	_, rest, ok2 := strings.Cut(rest, "```yaml\n")
	block, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/AGENTS.md has no complete example in a yaml block")
	}
	set, err := agents.Parse("AGENTS.md", []byte(block), agents.Options{Getenv: getenv(secrets), Builtin: builtin()})
	if err != nil {
		t.Fatal(err)
	}
	want := load(t, "example.yaml", secrets)
	for _, n := range want.Names() {
		got, err := set.Agent(n)
		w, _ := want.Agent(n)
		if err != nil || got.Digest != w.Digest {
			t.Fatalf("profile %s of the page: %v, digest %v, want %s", n, err, got, w.Digest)
		}
		if !strings.Contains(string(page), n+" ") || !strings.Contains(string(page), got.Digest[:len("sha256:")+4]+"…") {
			t.Fatalf("the page does not show %s's digest %s", n, got.Digest)
		}
	}
}

func TestMaxConcurrentCalls(t *testing.T) {
	t.Parallel()
	src := "providers:\n  p: {kind: scripted}\nmcp_servers:\n  s: {command: [a], max_concurrent_calls: 2}\n  d: {command: [b]}\nagents:\n  default: {provider: p}\n"
	set, err := agents.Parse("a.yaml", []byte(src), agents.Options{Getenv: getenv(nil), Builtin: builtin()})
	if err != nil {
		t.Fatal(err)
	}
	if got := set.MCPServers["s"].MaxConcurrentCalls; got != 2 {
		t.Errorf("max_concurrent_calls: 2 gives %d", got)
	}
	if got := set.MCPServers["d"].MaxConcurrentCalls; got != 0 {
		t.Errorf("no max_concurrent_calls gives %d, want 0 (the client's default)", got)
	}
}
