package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/agents"
	"github.com/carryon-hub/carryon/internal/app"
)

const agentsUsage = `usage: carryon agents check FILE [--json] [--no-mcp]
  Validate an agents file (YAML or JSON: providers, MCP servers, agent profiles) as
  "carryon serve --agents FILE" would at its start, without serving: every key known, every
  reference defined, every *_env variable set in this environment. Then start (or reach) the
  MCP servers the profiles use, list their tools and check that every key of effects and
  approval, and every entry of tools, matches a tool the profile really has. It prints the
  profiles (provider, model, limits, digest) and the effect class and approval every tool runs
  with, and exits 0; or prints what is wrong with its line and key, and exits 1.
  docs/AGENTS.md describes the file.

Examples:
  carryon agents check agents.yaml
  OLLAMA_KEY=... carryon agents check /etc/carryon/agents.yaml --json
  carryon agents check agents.yaml --no-mcp     # where the MCP servers cannot run`

func runAgents(ctx context.Context, args []string, getenv env, stdout io.Writer) error {
	fs := newFlagSet("agents", agentsUsage, stdout)
	asJSON := fs.Bool("json", false, "print the profiles as GET /v1/agents answers them, with the MCP servers' tools in their tools")
	noMCP := fs.Bool("no-mcp", false, "do not start or reach the MCP servers (nor read the A2A agents' cards): the keys that name their tools are then checked only when a run lists them")
	if len(args) == 0 {
		return fs.misuse()
	} else if isHelp(args[0]) {
		return fs.help()
	}
	pos, err := fs.parse(getenv, args[1:])
	if err != nil {
		return err
	}
	if args[0] != "check" || len(pos) != 1 {
		return fs.misuse()
	}
	set, err := agents.Load(pos[0], agents.Options{Getenv: getenv, Builtin: app.BuiltinTools(getenv)})
	if err != nil {
		return err
	}
	list := &carryon.AgentList{Memory: set.Memory()}
	for _, n := range set.Names() {
		a, _ := set.Agent(n)
		list.Items = append(list.Items, a)
	}
	if !*noMCP {
		if list, err = app.AgentTools(ctx, set, getenv, nil); err != nil {
			if carryon.ErrorCode(err) == carryon.EUNAVAILABLE {
				return fmt.Errorf("%s: %w (with --no-mcp the rest of the file is checked without them)", pos[0], err)
			}
			return err
		}
	}
	if *asJSON {
		return printJSON(stdout, list)
	}
	note := ""
	if *noMCP && len(set.MCPServers) > 0 {
		note = " (the MCP servers' tools not listed: --no-mcp)"
	}
	fmt.Fprintf(stdout, "%s: %d agent profiles, valid%s\n", pos[0], len(list.Items), note)
	fmt.Fprintln(stdout, memoryLine(list.Memory))
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tPROVIDER\tMODEL\tSTEPS\tBUDGET\tCOMPACTION\tMODEL LIMITS\tDIGEST")
	for _, a := range list.Items {
		compaction := "off"
		if a.CompactThreshold > 0 {
			compaction = fmt.Sprintf("over %d", a.CompactThreshold)
		}
		fmt.Fprintf(tw, "%s\t%s (%s)\t%s\t%d\t%d\t%s\t%s\t%s\n", a.Name, a.Provider, a.ProviderKind, a.Model, a.MaxSteps, a.ContextBudget, compaction, limitsOf(a.ModelLimits), a.Digest)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	tw = tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tTOOL\tFROM\tEFFECT\tAPPROVAL")
	for _, a := range list.Items {
		p, _ := set.Profile(a.Name)
		for _, t := range a.Tools {
			from := "built in"
			switch {
			case t.MCPServer != "":
				from = t.MCPServer + " (" + set.MCPServers[t.MCPServer].Transport() + ")"
			case t.A2AAgent != "":
				from = t.A2AAgent + " (a2a)"
			}
			r := p.Rule(t.Name, t.Effect)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Name, t.Name, from, said(string(t.Effect), r.EffectKey), said(t.Approval, r.ApprovalKey))
		}
		if *noMCP {
			for _, row := range unlisted(p, set) {
				fmt.Fprintf(tw, "%s\t%s\n", a.Name, row)
			}
		}
	}
	return tw.Flush()
}

// said is a rule's value, with the glob key that set it when one did: a glob key is the one whose
// reach a reader cannot see in the file at a glance.
func said(value, key string) string {
	if key != "" && strings.ContainsAny(key, `*?[\`) {
		return value + " (" + key + ")"
	}
	return value
}

// unlisted are the rows of the tools of p's MCP servers when they are not listed: one per key of
// its effects and approval that names such a tool, with what the key says (a tool no effects key
// names keeps its own class: unsafe, or its server's hint when trusted), then one per server for
// the rest of its tools, whose rules are not known until it lists them.
func unlisted(p *agents.Profile, set *agents.Set) []string {
	var names []string
	builtin := map[string]bool{}
	a, _ := set.Agent(p.Name)
	for _, t := range a.Tools {
		builtin[t.Name] = true
	}
	for _, k := range append(sortedNames(p.Effects), sortedNames(p.Approval)...) {
		if !builtin[k] && !strings.ContainsAny(k, `*?[\`) && !slices.Contains(names, k) {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	var rows []string
	for _, n := range names {
		server, _, _ := strings.Cut(n, "__")
		own := carryon.EffectUnsafe
		if m := set.MCPServers[server]; m != nil && m.TrustAnnotations {
			own = "its hint"
		}
		r := p.Rule(n, own)
		rows = append(rows, fmt.Sprintf("%s\t%s (%s), not listed\t%s\t%s", n, server, transport(set, server), said(string(r.Effect), r.EffectKey), said(r.Approval, r.ApprovalKey)))
	}
	for _, s := range p.MCPServers() {
		rows = append(rows, fmt.Sprintf("%s__*\t%s (%s), not listed\t-\t-", s, s, transport(set, s)))
	}
	return rows
}

func transport(set *agents.Set, server string) string {
	if m := set.MCPServers[server]; m != nil {
		return m.Transport()
	}
	return "?"
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// limitsOf says a profile's model limits in one cell: first byte, idle, total, output.
func limitsOf(l *carryon.AgentModelLimits) string {
	if l == nil {
		return "-"
	}
	secs := func(f float64) string { return (time.Duration(f * float64(time.Second))).String() }
	return fmt.Sprintf("first byte %s, idle %s, total %s, output %d KiB", secs(l.FirstByteTimeoutSeconds),
		secs(l.IdleTimeoutSeconds), secs(l.TimeoutSeconds), l.MaxOutputBytes>>10)
}

// memoryLine says how the server the file configures searches long-term memory.
func memoryLine(m *carryon.AgentMemory) string {
	if m == nil || m.Embeddings == nil {
		return "long-term memory: keyword search only (the file has no embeddings: key)"
	}
	e := m.Embeddings
	dims := "the model's own size"
	if e.Dimensions > 0 {
		dims = fmt.Sprintf("%d dimensions", e.Dimensions)
	}
	return fmt.Sprintf("long-term memory: hybrid search, embeddings by %s (%s, %s)", e.Provider, e.Model, dims)
}
