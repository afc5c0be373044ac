// Package agents owns the agent profiles a server runs: the agents file (providers, MCP servers
// and agents, in YAML or JSON), its validation with errors that name the line and the key, the
// profile made from the server's flags when there is no file, the canonical digest of each
// profile's definition, the public view of a profile (carryon.Agent, never a secret), and the
// resolution of a profile's tools: the built-in tools and the tools of named tool.Sources (MCP
// servers), selected by the profile's globs, with its rules (effects and approval, by name or
// glob) applied; and the check that every key of those rules, and every entry of its tools,
// matches a tool the profile really has: a built-in one at load, an MCP server's when the server
// lists its tools, where a key that matches nothing refuses the run's tools rather than leave the
// tool it meant to the default.
//
// It is named agents, not profile, because that is the word of the API (`GET /v1/agents`, the
// `agent` field of sessions and runs) and of the file (its `agents:` key): one word per concept.
//
// It decides what a profile is, not how a run goes: it builds no engine and writes nothing. The
// assembly (cmd/carryon) builds one engine per profile from a Set; the run manager asks which
// profile a run uses. Secrets reach it only as the names of environment variables (`*_env`),
// read through the getenv it is given; their values stay in unexported fields and out of the
// digest, the views and every error.
package agents

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model"
)

// Provider kinds.
const (
	KindOpenAI    = "openai"
	KindAnthropic = "anthropic"
	KindScripted  = "scripted"
)

// Defaults of a profile that says nothing of its limits.
const (
	DefaultMaxSteps      = 12
	DefaultContextBudget = 16000
)

// Provider is a model provider of the agents file, resolved: its key read from its environment
// variable.
type Provider struct {
	Name string
	// Kind is openai, anthropic or scripted.
	Kind string
	// BaseURL is the endpoint ("" for the kind's default).
	BaseURL string
	// APIKeyEnv names the environment variable that holds the key ("" for none).
	APIKeyEnv string
	// Delay is the latency the scripted provider adds per step.
	Delay  time.Duration
	apiKey string
}

// MCPServer is an MCP server of the agents file: a command started over stdio, or a streamable
// HTTP endpoint. The header values read from the variables of HeadersEnv are secrets: only
// Headers returns them, for the client that connects.
type MCPServer struct {
	Name string
	// Command is the program and its arguments of a stdio server.
	Command []string
	// Env are variables set for a stdio server's process, on top of the server's own environment.
	Env map[string]string
	// URL is the endpoint of a streamable HTTP server.
	URL string
	// HeadersEnv maps a header name to the environment variable that holds its value.
	HeadersEnv map[string]string
	// TrustAnnotations lets the server's readOnlyHint and idempotentHint set effect classes.
	TrustAnnotations bool
	// CallTimeout bounds one tool call (0: the MCP client's default).
	CallTimeout time.Duration
	// MaxConcurrentCalls is how many calls the server has in flight at most (0: the MCP client's
	// default).
	MaxConcurrentCalls int
	headers            map[string]string
}

// Headers returns the headers to send to an HTTP server, their values read from the variables of
// HeadersEnv at load (secrets: never shown or digested). Each call returns a new map.
func (m *MCPServer) Headers() map[string]string {
	return maps.Clone(m.headers)
}

// Transport is "stdio" for a command, "http" for a URL.
func (m *MCPServer) Transport() string {
	if len(m.Command) > 0 {
		return "stdio"
	}
	return "http"
}

// Profile is one agent of the agents file, resolved: defaults applied, every reference checked.
type Profile struct {
	Name string
	// Provider names the profile's Provider in the Set.
	Provider string
	Model    string
	// Instructions are added to carryon's own system prompt.
	Instructions string
	// Tools are globs over tool names (path.Match syntax).
	Tools []string
	// Effects override tools' effect classes by tool name or glob (see Rule).
	Effects map[string]carryon.EffectClass
	// Approval is always or never by tool name or glob (never when no key matches; see Rule).
	Approval       map[string]string
	MaxSteps       int
	ContextBudget  int
	RunTokenBudget int
	// CompactThreshold is the automatic compaction's threshold: before a model call whose
	// context would hold more tokens, the run compacts the session first (0: never).
	CompactThreshold int
	// Extraction, when set, learns facts from the profile's sessions into long-term memory.
	Extraction *Extraction
	// ModelLimits bound each model call of the profile's runs (each attempt, when retried).
	ModelLimits model.Limits
	// Digest is the digest of the profile's canonical definition (see Digest).
	Digest string
	// src is where the profile's keys are written, for the errors found when a server lists its
	// tools; nil for the profile of the flags.
	src *keySource
	// a2a are the names of the A2A agents (a2a_agents) the profile's globs name the tools of.
	a2a []string
}

// ApprovalOf returns the approval of a tool: always or never (see Rule).
func (p *Profile) ApprovalOf(toolName string) string {
	return p.Rule(toolName, "").Approval
}

// MCPServers returns the names of the MCP servers the profile's globs name tools of, sorted.
func (p *Profile) MCPServers() []string {
	return slices.DeleteFunc(p.Sources(), func(s string) bool { return slices.Contains(p.a2a, s) })
}

// A2AAgents returns the names of the remote A2A agents the profile's globs name the tools of,
// sorted.
func (p *Profile) A2AAgents() []string { return slices.Clone(p.a2a) }

// Sources returns the names of the MCP servers and A2A agents the profile's globs name tools of
// (SOURCE__…), sorted: the tool.Sources a run of the profile asks for tools.
func (p *Profile) Sources() []string {
	var out []string
	for _, g := range p.Tools {
		if server, ok := serverOf(g); ok && !slices.Contains(out, server) {
			out = append(out, server)
		}
	}
	slices.Sort(out)
	return out
}

// serverOf returns the MCP server a tool name or glob names: the part before "__", when it is a
// plain name (no glob characters).
func serverOf(name string) (string, bool) {
	server, _, ok := strings.Cut(name, "__")
	if !ok || server == "" || strings.ContainsAny(server, `*?[\`) {
		return "", false
	}
	return server, true
}

// Set is the agent profiles of a server, with their providers and MCP servers. It implements
// carryon.AgentCatalog and carryon.AgentService.
type Set struct {
	Providers  map[string]*Provider
	MCPServers map[string]*MCPServer
	// A2AAgents are the remote A2A agents whose tools profiles may select (a2a_agents).
	A2AAgents map[string]*A2AAgent
	Profiles  map[string]*Profile
	// Embeddings make the vectors of long-term memory (nil: keyword search only).
	Embeddings *Embeddings
	// Prices are the models' prices by model name (the file's prices key): what spend in money
	// counts. A model without one costs nothing in money.
	Prices map[string]carryon.Price
	views  map[string]*carryon.Agent
}

var (
	_ carryon.AgentCatalog = (*Set)(nil)
	_ carryon.AgentService = (*Set)(nil)
)

// Names returns the profiles' names, sorted.
func (s *Set) Names() []string {
	out := make([]string, 0, len(s.Profiles))
	for n := range s.Profiles {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Profile returns the named profile; EINVALID naming the known ones when there is none.
func (s *Set) Profile(name string) (*Profile, error) {
	if name == "" {
		name = carryon.DefaultAgent
	}
	p, ok := s.Profiles[name]
	if !ok {
		return nil, s.unknown(name)
	}
	return p, nil
}

func (s *Set) unknown(name string) error {
	return carryon.Errorf(carryon.EINVALID, "agent %q is not a profile of this server; the known ones are: %s", name, strings.Join(s.Names(), ", "))
}

// Agent returns the public view of the named profile; EINVALID naming the known ones when there
// is none. "" names the default profile.
func (s *Set) Agent(name string) (*carryon.Agent, error) {
	if name == "" {
		name = carryon.DefaultAgent
	}
	v, ok := s.views[name]
	if !ok {
		return nil, s.unknown(name)
	}
	return v, nil
}

// ListAgents returns the public views of every profile, by name.
func (s *Set) ListAgents(ctx context.Context) (*carryon.AgentList, error) {
	if carryon.UserIDFromContext(ctx) == "" {
		return nil, carryon.Errorf(carryon.EUNAUTHORIZED, "no authenticated user")
	}
	out := &carryon.AgentList{Items: []*carryon.Agent{}, Memory: s.Memory()}
	for _, n := range s.Names() {
		out.Items = append(out.Items, s.views[n])
	}
	return out, nil
}
