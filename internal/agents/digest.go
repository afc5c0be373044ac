package agents

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
)

// canonical is the definition of a profile that its digest covers: everything that decides how
// its runs go, resolved (defaults applied, its provider and MCP servers inlined), with secrets
// named by their variables and never included. Its name is not part of it: two profiles defined
// alike have one digest. encoding/json writes struct fields in order and map keys sorted, so the
// same definition always encodes to the same bytes.
type canonical struct {
	Provider       canonicalProvider              `json:"provider"`
	Model          string                         `json:"model"`
	Instructions   string                         `json:"instructions"`
	Tools          []string                       `json:"tools"`
	Effects        map[string]carryon.EffectClass `json:"effects"`
	Approval       map[string]string              `json:"approval"`
	MaxSteps       int                            `json:"max_steps"`
	ContextBudget  int                            `json:"context_budget"`
	RunTokenBudget int                            `json:"run_token_budget"`
	// CompactThreshold is left out when 0, so the digests of profiles without it stay as they were.
	CompactThreshold int               `json:"compact_threshold,omitempty"`
	ModelLimits      canonicalLimits   `json:"model_limits"`
	MCPServers       []canonicalServer `json:"mcp_servers"`
	// A2AAgents is left out when empty, so the digests of profiles without them stay as they were.
	A2AAgents []canonicalA2A `json:"a2a_agents,omitempty"`
}

type canonicalA2A struct {
	Name          string              `json:"name"`
	URL           string              `json:"url"`
	HeadersEnv    map[string]string   `json:"headers_env"`
	APIKeyEnv     string              `json:"api_key_env"`
	CallTimeoutNS int64               `json:"call_timeout_ns"`
	Effect        carryon.EffectClass `json:"effect"`
}

type canonicalLimits struct {
	FirstByteNS    int64 `json:"first_byte_ns"`
	IdleNS         int64 `json:"idle_ns"`
	TotalNS        int64 `json:"total_ns"`
	MaxOutputBytes int   `json:"max_output_bytes"`
}

type canonicalProvider struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	BaseURL   string `json:"base_url"`
	APIKeyEnv string `json:"api_key_env"`
	DelayNS   int64  `json:"delay_ns"`
}

type canonicalServer struct {
	Name             string            `json:"name"`
	Command          []string          `json:"command"`
	Env              map[string]string `json:"env"`
	URL              string            `json:"url"`
	HeadersEnv       map[string]string `json:"headers_env"`
	TrustAnnotations bool              `json:"trust_annotations"`
	CallTimeoutNS    int64             `json:"call_timeout_ns"`
}

// Digest returns "sha256:" and the hex SHA-256 of the canonical JSON of profile p of the set.
func (s *Set) Digest(p *Profile) string {
	prov := s.Providers[p.Provider]
	c := canonical{
		Provider: canonicalProvider{Name: prov.Name, Kind: prov.Kind, BaseURL: prov.BaseURL, APIKeyEnv: prov.APIKeyEnv, DelayNS: int64(prov.Delay)},
		Model:    p.Model, Instructions: p.Instructions, Tools: p.Tools, Effects: p.Effects, Approval: p.Approval,
		MaxSteps: p.MaxSteps, ContextBudget: p.ContextBudget, RunTokenBudget: p.RunTokenBudget, CompactThreshold: p.CompactThreshold,
		ModelLimits: canonicalLimits{FirstByteNS: int64(p.ModelLimits.FirstByte), IdleNS: int64(p.ModelLimits.Idle),
			TotalNS: int64(p.ModelLimits.Total), MaxOutputBytes: p.ModelLimits.MaxOutputBytes},
		MCPServers: []canonicalServer{},
	}
	for _, name := range p.MCPServers() {
		m := s.MCPServers[name]
		c.MCPServers = append(c.MCPServers, canonicalServer{Name: m.Name, Command: m.Command, Env: m.Env, URL: m.URL,
			HeadersEnv: m.HeadersEnv, TrustAnnotations: m.TrustAnnotations, CallTimeoutNS: int64(m.CallTimeout)})
	}
	for _, name := range p.A2AAgents() {
		a := s.A2AAgents[name]
		c.A2AAgents = append(c.A2AAgents, canonicalA2A{Name: a.Name, URL: a.URL, HeadersEnv: a.HeadersEnv, APIKeyEnv: a.APIKeyEnv,
			CallTimeoutNS: int64(a.CallTimeout), Effect: a.Effect})
	}
	b, _ := json.Marshal(c) // strings, numbers and maps of strings: it cannot fail
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// finish computes every profile's digest and public view, once the set is valid.
func (s *Set) finish(builtin []tool.Tool) {
	s.views = map[string]*carryon.Agent{}
	for name, p := range s.Profiles {
		p.Digest = s.Digest(p)
		s.views[name] = s.view(p, builtin)
	}
}

// view is the public description of a profile: no key, no header value.
func (s *Set) view(p *Profile, builtin []tool.Tool) *carryon.Agent {
	prov := s.Providers[p.Provider]
	a := &carryon.Agent{
		Name: p.Name, Provider: prov.Name, ProviderKind: prov.Kind, Model: p.Model, Instructions: p.Instructions,
		ToolPatterns: slices.Clone(p.Tools),
		MaxSteps:     p.MaxSteps, ContextBudget: p.ContextBudget, CompactThreshold: p.CompactThreshold, Digest: p.Digest,
		ModelLimits: &carryon.AgentModelLimits{FirstByteTimeoutSeconds: p.ModelLimits.FirstByte.Seconds(),
			IdleTimeoutSeconds: p.ModelLimits.Idle.Seconds(), TimeoutSeconds: p.ModelLimits.Total.Seconds(),
			MaxOutputBytes: int64(p.ModelLimits.MaxOutputBytes)},
	}
	if p.Extraction != nil {
		a.MemoryExtraction = p.Extraction.Namespace
	}
	if len(p.Effects) > 0 {
		a.Effects = p.Effects
	}
	if len(p.Approval) > 0 {
		a.Approval = p.Approval
	}
	offered, from := slices.Clone(builtin), map[string]string{}
	for _, name := range p.A2AAgents() {
		r := s.A2AAgents[name]
		offered = append(offered, namedTool{name: A2AToolName(name), effect: r.Effect})
		from[A2AToolName(name)] = name
		ra := carryon.AgentA2AAgent{Name: name, URL: r.URL, Tool: A2AToolName(name), APIKeyEnv: r.APIKeyEnv, CallTimeoutSeconds: r.CallTimeout.Seconds()}
		if len(r.HeadersEnv) > 0 {
			ra.HeadersEnv = r.HeadersEnv
		}
		a.A2AAgents = append(a.A2AAgents, ra)
	}
	a.Tools = toolViews(p, Select(p, offered), nil)
	for i := range a.Tools {
		a.Tools[i].A2AAgent = from[a.Tools[i].Name]
	}
	for _, name := range p.MCPServers() {
		m := s.MCPServers[name]
		ms := carryon.AgentMCPServer{Name: m.Name, Transport: m.Transport(), Command: m.Command, URL: m.URL,
			TrustAnnotations: m.TrustAnnotations, CallTimeoutSeconds: m.CallTimeout.Seconds()}
		if len(m.Env) > 0 {
			ms.EnvKeys = sortedKeys(m.Env)
		}
		if len(m.HeadersEnv) > 0 {
			ms.HeadersEnv = m.HeadersEnv
		}
		a.MCPServers = append(a.MCPServers, ms)
	}
	return a
}
