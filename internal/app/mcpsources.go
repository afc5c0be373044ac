package app

import (
	"context"
	"log/slog"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/agents"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/a2atool"
	"github.com/carryon-hub/carryon/internal/tool/mcptool"
)

// mcpSources connects the agents file's MCP servers as tool sources, by server name: one client
// per server, shared by the profiles that use it, started lazily on a run's first need; and its
// remote A2A agents, by their names (their cards read on first need). close stops the MCP
// servers (their stdio processes too); Close calls it once the runners have stopped.
func mcpSources(set *agents.Set, log *slog.Logger) (sources map[string]tool.Source, close func(), err error) {
	var servers []*mcptool.Server
	close = func() {
		for _, s := range servers {
			s.Close()
		}
	}
	sources = map[string]tool.Source{}
	for name, m := range set.MCPServers {
		cfg := mcptool.Config{Name: name, Command: m.Command, Env: m.Env, URL: m.URL, Headers: m.Headers(),
			TrustAnnotations: m.TrustAnnotations, CallTimeout: m.CallTimeout, MaxConcurrentCalls: m.MaxConcurrentCalls}
		if err := cfg.Validate(); err != nil {
			close()
			return nil, nil, err
		}
		s := mcptool.New(cfg, log.With("mcp_server", name))
		servers = append(servers, s)
		sources[name] = s
	}
	for name, r := range set.A2AAgents {
		a, err := a2atool.New(a2atool.Config{Name: name, URL: r.URL, Headers: r.Headers(), CallTimeout: r.CallTimeout, Effect: r.Effect})
		if err != nil {
			close()
			return nil, nil, err
		}
		sources[name] = a
	}
	return sources, close, nil
}

// AgentTools starts (or reaches) the MCP servers the profiles of set use, lists their tools, and
// returns the view of every profile with every tool a run of it would get now, the servers' tools
// included, each with the effect class and approval it runs with (agents.Set.ListTools, whose
// error names each key of the file that matches none of the listed tools). The servers are
// stopped before it returns. getenv decides the built-in tools (BuiltinTools); log gets the
// servers' stderr (nil discards). `carryon agents check` prints its answer.
func AgentTools(ctx context.Context, set *agents.Set, getenv func(string) string, log *slog.Logger) (*carryon.AgentList, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sources, closeSources, err := mcpSources(set, log)
	if err != nil {
		return nil, err
	}
	defer closeSources()
	return set.ListTools(ctx, BuiltinTools(getenv), sources)
}
