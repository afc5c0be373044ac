package carryon

import "context"

// DefaultAgent is the name of the agent profile a session is bound to when it names none. A server
// started without an agents file has exactly this one profile, made from its flags.
const DefaultAgent = "default"

// Approvals a profile may ask for before a tool call.
const (
	// ApprovalNever runs the call without asking (the default).
	ApprovalNever = "never"
	// ApprovalAlways stops the run before the call until a user decides.
	ApprovalAlways = "always"
)

// Agent is an agent profile as a caller sees it: which provider and model it runs, its
// instructions, its tools with their effect classes and approvals, and the digest of its whole
// definition. It never holds a secret (keys and headers are named by their environment variables
// in the agents file and resolved only inside the server).
type Agent struct {
	Name string `json:"name"`
	// Provider names the provider in the agents file; ProviderKind is openai, anthropic or scripted.
	Provider     string `json:"provider"`
	ProviderKind string `json:"provider_kind"`
	Model        string `json:"model"`
	// Instructions are added to carryon's own system prompt.
	Instructions string `json:"instructions,omitempty"`
	// ToolPatterns are the profile's globs over tool names (path.Match syntax).
	ToolPatterns []string `json:"tool_patterns"`
	// Tools are the built-in tools the patterns select, and the tools of the remote A2A agents
	// they select (one per agent, known from the file), with the effect class and approval they
	// run with. Tools of MCP servers are found when a run starts and are not listed by GET
	// /v1/agents; `carryon agents check` lists them here too, as their servers list them.
	Tools []AgentTool `json:"tools"`
	// Effects override tools' effect classes by tool name or glob (MCP tools are unsafe unless
	// said otherwise): an exact name wins over a glob, a longer glob over a shorter one.
	Effects map[string]EffectClass `json:"effects,omitempty"`
	// Approval says, by tool name or glob (as Effects), whether a call waits for a user first:
	// always or never.
	Approval map[string]string `json:"approval,omitempty"`
	// MCPServers are the MCP servers the patterns name tools of.
	MCPServers []AgentMCPServer `json:"mcp_servers,omitempty"`
	// A2AAgents are the remote A2A agents the patterns name the tools of.
	A2AAgents     []AgentA2AAgent `json:"a2a_agents,omitempty"`
	MaxSteps      int             `json:"max_steps"`
	ContextBudget int             `json:"context_budget"`
	// MemoryExtraction is the namespace facts learned from the profile's sessions go to ("": the
	// profile learns none).
	MemoryExtraction string `json:"memory_extraction,omitempty"`
	// CompactThreshold is the profile's automatic compaction threshold in tokens (the agents
	// file's compaction, a share resolved against ContextBudget), 0 for none (docs/AGENTS.md,
	// "Automatic compaction"). A run's own threshold (NewRun.CompactThreshold) takes its place.
	CompactThreshold int `json:"compact_threshold,omitempty"`
	// ModelLimits bound each model call of the profile's runs (docs/AGENTS.md, "Model limits").
	ModelLimits *AgentModelLimits `json:"model_limits,omitempty"`
	// Digest is "sha256:" and the hex SHA-256 of the profile's canonical definition (provider,
	// model, instructions, tools, effects, approvals, limits and the MCP servers it uses; secrets
	// are named, never included). A run records the digest of the definition it ran with.
	Digest string `json:"digest"`
}

// AgentModelLimits are the bounds of one model call of a profile: on a breach the step fails
// with model_timeout or model_output_limit, retried as the profile's retry policy says.
type AgentModelLimits struct {
	// FirstByteTimeoutSeconds is the longest wait for the model's response headers.
	FirstByteTimeoutSeconds float64 `json:"first_byte_timeout_seconds"`
	// IdleTimeoutSeconds is the longest silence inside the model's answer.
	IdleTimeoutSeconds float64 `json:"idle_timeout_seconds"`
	// TimeoutSeconds is the longest one model call may take.
	TimeoutSeconds float64 `json:"timeout_seconds"`
	// MaxOutputBytes bounds what the model writes in one call.
	MaxOutputBytes int64 `json:"max_output_bytes"`
}

// AgentTool is one tool of a profile.
type AgentTool struct {
	Name   string      `json:"name"`
	Effect EffectClass `json:"effect"`
	// Approval is always or never.
	Approval string `json:"approval"`
	// MCPServer names the MCP server that offers the tool; "" for a built-in tool.
	MCPServer string `json:"mcp_server,omitempty"`
	// A2AAgent names the remote A2A agent the tool sends messages to (docs/A2A.md, "carryon
	// calling other agents"); "" for another tool.
	A2AAgent string `json:"a2a_agent,omitempty"`
}

// AgentA2AAgent is a remote A2A agent a profile uses, without its secrets: the environment
// variables of its headers and key are named, their values never shown.
type AgentA2AAgent struct {
	Name string `json:"name"`
	// URL is the agent card's URL or the base it is under.
	URL string `json:"url"`
	// Tool is the name of the tool that sends the agent a message (NAME__send_message).
	Tool string `json:"tool"`
	// HeadersEnv maps a header name to the environment variable that holds its value.
	HeadersEnv map[string]string `json:"headers_env,omitempty"`
	// APIKeyEnv names the variable whose value is sent as a bearer token.
	APIKeyEnv          string  `json:"api_key_env,omitempty"`
	CallTimeoutSeconds float64 `json:"call_timeout_seconds,omitempty"`
}

// AgentMCPServer is an MCP server a profile uses, without its secrets: the environment variables
// of its headers are named, their values never shown.
type AgentMCPServer struct {
	Name string `json:"name"`
	// Transport is stdio (a command) or http (streamable HTTP at URL).
	Transport string   `json:"transport"`
	Command   []string `json:"command,omitempty"`
	// EnvKeys are the names of the variables set for a stdio server's process.
	EnvKeys []string `json:"env_keys,omitempty"`
	URL     string   `json:"url,omitempty"`
	// HeadersEnv maps a header name to the environment variable that holds its value.
	HeadersEnv         map[string]string `json:"headers_env,omitempty"`
	TrustAnnotations   bool              `json:"trust_annotations"`
	CallTimeoutSeconds float64           `json:"call_timeout_seconds,omitempty"`
}

// AgentList is the answer of AgentService.ListAgents.
type AgentList struct {
	Items []*Agent `json:"items"`
	// Memory says how the server searches long-term memory.
	Memory *AgentMemory `json:"memory,omitempty"`
}

// AgentMemory is how a server searches long-term memory: hybrid (keywords and vectors) with
// the embeddings it names, or keyword only when the agents file has no embeddings.
type AgentMemory struct {
	Search     SearchMode       `json:"search"`
	Embeddings *AgentEmbeddings `json:"embeddings,omitempty"`
}

// AgentEmbeddings are the embeddings of the agents file: the provider and model that make the
// vectors of long-term memory, their size (0: the model's own) and the similarity above which
// an added fact consolidates into its near duplicate (0: the default, 0.9).
type AgentEmbeddings struct {
	Provider         string  `json:"provider"`
	Model            string  `json:"model"`
	Dimensions       int     `json:"dimensions,omitempty"`
	ConsolidateAbove float64 `json:"consolidate_above,omitempty"`
}

// AgentCatalog names the agent profiles a server runs.
type AgentCatalog interface {
	// Agent returns the named profile. EINVALID, naming the known profiles, when there is none.
	Agent(name string) (*Agent, error)
}

// AgentService lists the agent profiles a caller may use.
type AgentService interface {
	// ListAgents returns the profiles, by name. EUNAUTHORIZED without a caller.
	ListAgents(ctx context.Context) (*AgentList, error)
}
