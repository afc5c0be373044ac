package agents

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
)

var (
	nameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	envRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// validator resolves a decoded file into a Set, collecting every problem with its place.
type validator struct {
	file    string
	pos     *filePositions
	getenv  func(string) string
	builtin []tool.Tool
	errs    []string
	lines   []int
}

// fail records a problem at the key path p.
func (v *validator) fail(p, format string, args ...any) {
	line := v.pos.line(p)
	msg := fmt.Sprintf("%s:%d: %s: %s", v.file, line, p, fmt.Sprintf(format, args...))
	i := sort.SearchInts(v.lines, line+1) // keep the problems in the file's order
	v.lines = slices.Insert(v.lines, i, line)
	v.errs = slices.Insert(v.errs, i, msg)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (v *validator) resolve(raw *rawFile) *Set {
	set := &Set{Providers: map[string]*Provider{}, MCPServers: map[string]*MCPServer{}, A2AAgents: map[string]*A2AAgent{}, Profiles: map[string]*Profile{}}
	used := map[string]bool{}
	for _, name := range sortedKeys(raw.Agents) {
		if a := raw.Agents[name]; a != nil {
			used["providers."+a.Provider] = true
			for _, g := range a.Tools {
				if s, ok := serverOf(g); ok {
					used["mcp_servers."+s] = true
					used["a2a_agents."+s] = true
				}
			}
		}
	}
	if raw.Embeddings != nil {
		used["providers."+raw.Embeddings.Provider] = true
	}
	for _, name := range sortedKeys(raw.Providers) {
		if p := v.provider("providers."+name, name, raw.Providers[name], used["providers."+name]); p != nil {
			set.Providers[name] = p
		}
	}
	for _, name := range sortedKeys(raw.MCPServers) {
		if s := v.server("mcp_servers."+name, name, raw.MCPServers[name], used["mcp_servers."+name]); s != nil {
			set.MCPServers[name] = s
		}
	}
	for _, name := range sortedKeys(raw.A2AAgents) {
		if a := v.a2aAgent("a2a_agents."+name, name, raw.A2AAgents[name], used["a2a_agents."+name], raw); a != nil {
			set.A2AAgents[name] = a
		}
	}
	if len(raw.Agents) == 0 {
		v.fail("agents", "the file defines no agent; it needs at least one, named %s", carryon.DefaultAgent)
	} else if _, ok := raw.Agents[carryon.DefaultAgent]; !ok {
		v.fail("agents", "no agent is named %s (sessions that name no agent use it)", carryon.DefaultAgent)
	}
	for _, name := range sortedKeys(raw.Agents) {
		if p := v.agent("agents."+name, name, raw.Agents[name], raw, set); p != nil {
			set.Profiles[name] = p
		}
	}
	set.Embeddings = v.embeddings(raw.Embeddings, set)
	set.Prices = v.prices(raw.Prices)
	if len(v.errs) == 0 {
		set.finish(v.builtin)
	}
	return set
}

func (v *validator) provider(at, name string, r *rawProvider, used bool) *Provider {
	if !nameRE.MatchString(name) {
		v.fail(at, "a provider's name is 1 to 64 letters, digits, _ or -")
	}
	if r == nil {
		v.fail(at, "needs at least kind")
		return nil
	}
	p := &Provider{Name: name, Kind: r.Kind, BaseURL: r.BaseURL, APIKeyEnv: r.APIKeyEnv}
	switch r.Kind {
	case KindScripted:
		if r.BaseURL != "" || r.APIKeyEnv != "" {
			v.fail(at, "a scripted provider is offline: it takes no base_url or api_key_env")
		}
		if r.Delay != nil {
			p.Delay = v.duration(at+".delay", *r.Delay, 0)
		}
		return p
	case KindOpenAI, KindAnthropic:
	case "":
		v.fail(at, "needs kind: openai, anthropic or scripted")
		return nil
	default:
		v.fail(at+".kind", "must be openai, anthropic or scripted, not %q", r.Kind)
		return nil
	}
	if r.Delay != nil {
		v.fail(at+".delay", "only a scripted provider takes a delay")
	}
	if r.BaseURL != "" {
		if u, err := url.Parse(r.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.fail(at+".base_url", "must be an http or https URL, not %q", r.BaseURL)
		}
	}
	switch {
	case r.APIKeyEnv != "" && !envRE.MatchString(r.APIKeyEnv):
		v.fail(at+".api_key_env", "must name an environment variable (letters, digits, _), not %q", r.APIKeyEnv)
	case r.APIKeyEnv != "" && used:
		p.apiKey = v.getenv(r.APIKeyEnv)
		if p.apiKey == "" {
			v.fail(at+".api_key_env", "names %s, which is not set in the environment", r.APIKeyEnv)
		}
	case r.APIKeyEnv == "" && r.BaseURL == "":
		v.fail(at, "needs api_key_env (the variable holding the key) to call the %s endpoint, or a base_url that needs no key", r.Kind)
	}
	return p
}

func (v *validator) server(at, name string, r *rawServer, used bool) *MCPServer {
	if !nameRE.MatchString(name) || strings.Contains(name, "__") {
		v.fail(at, "an MCP server's name is 1 to 64 letters, digits, _ or - without \"__\" (its tools are named SERVER__TOOL)")
	}
	if r == nil {
		v.fail(at, "needs command or url")
		return nil
	}
	s := &MCPServer{Name: name, Command: r.Command, Env: r.Env, URL: r.URL, HeadersEnv: r.HeadersEnv, TrustAnnotations: r.TrustAnnotations}
	switch {
	case len(r.Command) > 0 && r.URL != "":
		v.fail(at, "takes command (a stdio server) or url (a streamable HTTP server), not both")
	case len(r.Command) > 0:
		if r.Command[0] == "" {
			v.fail(at+".command", "the first element is the program to run; it is empty")
		}
		if len(r.HeadersEnv) > 0 {
			v.fail(at+".headers_env", "only a server with a url takes headers_env")
		}
		for _, k := range sortedKeys(r.Env) {
			if !envRE.MatchString(k) {
				v.fail(at+".env."+k, "must be an environment variable's name (letters, digits, _)")
			}
		}
	case r.URL != "":
		if u, err := url.Parse(r.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.fail(at+".url", "must be an http or https URL, not %q", r.URL)
		}
		if len(r.Env) > 0 {
			v.fail(at+".env", "only a server with a command takes env (use headers_env for an HTTP server)")
		}
		s.headers = map[string]string{}
		for _, h := range sortedKeys(r.HeadersEnv) {
			env := r.HeadersEnv[h]
			switch {
			case h == "" || strings.ContainsAny(h, " :\r\n"):
				v.fail(at+".headers_env."+h, "is not a header name")
			case !envRE.MatchString(env):
				v.fail(at+".headers_env."+h, "must name an environment variable (letters, digits, _), not %q", env)
			case used:
				s.headers[h] = v.getenv(env)
				if s.headers[h] == "" {
					v.fail(at+".headers_env."+h, "names %s, which is not set in the environment", env)
				}
			}
		}
	default:
		v.fail(at, "needs command (a stdio server) or url (a streamable HTTP server)")
	}
	if r.CallTimeout != nil {
		s.CallTimeout = v.duration(at+".call_timeout", *r.CallTimeout, time.Nanosecond)
	}
	if r.MaxConcurrent != nil {
		if *r.MaxConcurrent < 1 {
			v.fail(at+".max_concurrent_calls", "must be 1 or more, not %d", *r.MaxConcurrent)
		}
		s.MaxConcurrentCalls = *r.MaxConcurrent
	}
	return s
}

// duration parses a duration of at least least, such as "30s".
func (v *validator) duration(at, text string, least time.Duration) time.Duration {
	d, err := time.ParseDuration(text)
	switch {
	case err != nil:
		v.fail(at, "must be a duration such as 30s or 1m30s, not %q", text)
	case d < least && least == 0:
		v.fail(at, "must be 0s or more, not %s", text)
	case d < least:
		v.fail(at, "must be more than 0, such as 30s")
	}
	return d
}

// defaultModels is the model of a profile that names none, by provider kind.
var defaultModels = map[string]string{KindOpenAI: "gpt-4o-mini", KindAnthropic: "claude-sonnet-4-5", KindScripted: "scripted"}

func (v *validator) agent(at, name string, r *rawAgent, raw *rawFile, set *Set) *Profile {
	if !nameRE.MatchString(name) {
		v.fail(at, "an agent's name is 1 to 64 letters, digits, _ or -")
	}
	if r == nil {
		v.fail(at, "needs at least provider")
		return nil
	}
	p := &Profile{Name: name, Provider: r.Provider, Model: r.Model, Instructions: r.Instructions,
		MaxSteps: DefaultMaxSteps, ContextBudget: DefaultContextBudget}
	if _, ok := raw.Providers[r.Provider]; r.Provider == "" {
		v.fail(at, "needs provider (one of: %s)", strings.Join(sortedKeys(raw.Providers), ", "))
	} else if !ok {
		v.fail(at+".provider", "%q is not in providers (known: %s)", r.Provider, strings.Join(sortedKeys(raw.Providers), ", "))
	} else if prov := set.Providers[r.Provider]; prov != nil && p.Model == "" {
		p.Model = defaultModels[prov.Kind]
	}
	if err := carryon.CheckText("instructions", r.Instructions); err != nil {
		v.fail(at+".instructions", "must be UTF-8 text without NUL characters")
	}
	for _, lim := range []struct {
		key string
		in  *int
		out *int
		min int
	}{{"max_steps", r.MaxSteps, &p.MaxSteps, 1}, {"context_budget", r.ContextBudget, &p.ContextBudget, 1}, {"run_token_budget", r.RunTokenBudget, &p.RunTokenBudget, 0}} {
		if lim.in == nil {
			continue
		}
		if *lim.in < lim.min {
			v.fail(at+"."+lim.key, "must be %d or more, not %d", lim.min, *lim.in)
		}
		*lim.out = *lim.in
	}
	p.ModelLimits = v.modelLimits(at, r)
	p.CompactThreshold = v.compaction(at+".compaction", r.Compaction, p.ContextBudget)
	p.Extraction = v.extraction(at+".memory_extraction", r.MemoryExtraction)
	p.Tools = v.globs(at+".tools", r.Tools, raw)
	for _, s := range p.Sources() {
		if _, ok := raw.A2AAgents[s]; ok {
			p.a2a = append(p.a2a, s)
		}
	}
	p.src = &keySource{file: v.file, pos: v.pos}
	p.Effects = map[string]carryon.EffectClass{}
	for _, t := range sortedKeys(r.Effects) {
		e, kat := carryon.EffectClass(r.Effects[t]), at+".effects."+t
		if !v.toolKey(kat, t, p, raw) {
			continue
		}
		switch e {
		case carryon.EffectRead, carryon.EffectIdempotent, carryon.EffectUnsafe:
		case carryon.EffectReconcilable:
			if isGlob(t) {
				v.fail(kat, "reconcilable is for one tool that can check the world: name it, not a glob")
				continue
			}
			if _, ok := v.builtinTool(t).(tool.Reconciler); !ok {
				v.fail(kat, "reconcilable needs a tool that can check the world; %s cannot", t)
				continue
			}
		default:
			v.fail(kat, "must be read, idempotent, reconcilable or unsafe, not %q", e)
			continue
		}
		p.Effects[t] = e
	}
	p.Approval = map[string]string{}
	for _, t := range sortedKeys(r.Approval) {
		a, kat := r.Approval[t], at+".approval."+t
		if !v.toolKey(kat, t, p, raw) {
			continue
		}
		if a != carryon.ApprovalAlways && a != carryon.ApprovalNever {
			v.fail(kat, "must be always or never, not %q", a)
			continue
		}
		p.Approval[t] = a
	}
	for _, pr := range p.ambiguities(v.known(p)) {
		v.fail(at+"."+pr.path, "%s", pr.msg)
	}
	return p
}

// globs checks a profile's tool globs; without any, the profile has every built-in tool.
func (v *validator) globs(at string, globs []string, raw *rawFile) []string {
	if globs == nil {
		out := []string{}
		for _, t := range v.builtin {
			out = append(out, t.Name())
		}
		return out
	}
	for i, g := range globs {
		gat := fmt.Sprintf("%s[%d]", at, i)
		if _, err := path.Match(g, ""); err != nil || g == "" {
			v.fail(gat, "%q is not a glob over tool names (path.Match syntax, such as files__*)", g)
			continue
		}
		if server, ok := serverOf(g); ok {
			_, mcp := raw.MCPServers[server]
			_, a2a := raw.A2AAgents[server]
			switch tool := A2AToolName(server); {
			case !mcp && !a2a:
				v.fail(gat, "%q names tools of MCP server %s, which mcp_servers does not define (nor a2a_agents an agent of that name)", g, server)
			case a2a && !isGlob(g) && g != tool:
				v.fail(gat, "%q is not the tool of A2A agent %s, which is %s", g, server, tool)
			case a2a && isGlob(g) && !matchesAny(g, []string{tool}):
				v.fail(gat, "%q does not match the tool of A2A agent %s, which is %s", g, server, tool)
			}
			continue
		}
		switch {
		case !isGlob(g) && v.builtinTool(g) == nil:
			v.fail(gat, "%q is not a built-in tool (%s) nor SERVER__TOOL of an MCP server", g, suggest(g, v.builtinNames(), "built in:"))
		case isGlob(g) && !matchesAny(g, v.builtinNames()):
			v.fail(gat, "%q matches no built-in tool (built in: %s); a glob over an MCP server's tools starts with its name, such as files__*", g, strings.Join(v.builtinNames(), ", "))
		}
	}
	return globs
}

// keyRE is what a key of effects or approval may hold: a tool's characters and path.Match's.
var keyRE = regexp.MustCompile(`^[a-zA-Z0-9_\-*?\[\]^!\\]{1,128}$`)

// toolKey checks a key of effects or approval: a tool's name, or a glob over tools' names, that
// matches a tool of profile p. A built-in tool is known now; a key that names tools of one of the
// profile's MCP servers is checked when the server lists them (see Tools).
func (v *validator) toolKey(at, key string, p *Profile, raw *rawFile) bool {
	if _, err := path.Match(key, ""); err != nil || !keyRE.MatchString(key) || !isGlob(key) && !nameRE.MatchString(key) {
		v.fail(at, "is not a tool name (1 to 64 letters, digits, _ or -) nor a glob over tool names (path.Match syntax, such as files__*)")
		return false
	}
	servers := p.MCPServers()
	builtins := v.known(p)
	server, named := serverOf(key)
	if isGlob(key) {
		switch {
		case matchesAny(key, builtins):
		case named && slices.Contains(servers, server):
		case !named && len(servers) > 0:
		default:
			v.fail(at, "matches none of the agent's tools (%s)", suggest(key, builtins, "they are:"))
			return false
		}
		return true
	}
	switch {
	case named && slices.Contains(servers, server) && selected(p.Tools, key):
		return true // checked when the server lists its tools
	case slices.Contains(builtins, key):
		return true
	case named && slices.Contains(servers, server):
		v.fail(at, "the agent's tools do not include %s (no entry of its tools selects it: %s)", key, entries(p.Tools))
	case v.builtinTool(key) != nil:
		v.fail(at, "the agent's tools do not include %s (a built-in tool that no entry of its tools selects: %s)", key, entries(p.Tools))
	case named && raw.MCPServers[server] != nil:
		v.fail(at, "the agent's tools do not include %s (no entry of its tools names MCP server %s)", key, server)
	case named && raw.A2AAgents[server] != nil && slices.Contains(p.a2a, server):
		v.fail(at, "the agent's tools do not include %s (the tool of A2A agent %s is %s)", key, server, A2AToolName(server))
	case named && raw.A2AAgents[server] != nil:
		v.fail(at, "the agent's tools do not include %s (no entry of its tools names A2A agent %s)", key, server)
	default:
		candidates := slices.Clone(builtins)
		for _, g := range p.Tools {
			if _, ok := serverOf(g); ok {
				candidates = append(candidates, g)
			}
		}
		v.fail(at, "the agent's tools do not include %s (%s)", key, suggest(key, candidates, "its tools:"))
	}
	return false
}

// entries says a profile's tools entries, "[]" for none.
func entries(globs []string) string {
	if len(globs) == 0 {
		return "[]"
	}
	return strings.Join(globs, ", ")
}

// known are the names of the tools of profile p known at load: the built-in tools and the
// tools of its A2A agents that its globs select.
func (v *validator) known(p *Profile) []string {
	out := v.selectedBuiltins(p.Tools)
	for _, a := range p.a2a {
		if selected(p.Tools, A2AToolName(a)) {
			out = append(out, A2AToolName(a))
		}
	}
	return out
}

// selectedBuiltins are the names of the built-in tools the globs select.
func (v *validator) selectedBuiltins(globs []string) []string {
	var out []string
	for _, t := range v.builtin {
		if selected(globs, t.Name()) {
			out = append(out, t.Name())
		}
	}
	return out
}

func (v *validator) builtinTool(name string) tool.Tool {
	for _, t := range v.builtin {
		if t.Name() == name {
			return t
		}
	}
	return nil
}

func (v *validator) builtinNames() []string {
	var out []string
	for _, t := range v.builtin {
		out = append(out, t.Name())
	}
	return out
}

// selected reports whether one of the globs matches the tool name.
func selected(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}
