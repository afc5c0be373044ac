package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/agents"
	"github.com/carryon-hub/carryon/hub"
)

const agentsUsage = `usage: carryon agents check FILE [--json]
  Validate an agents file (YAML or JSON: providers, MCP servers, agent profiles) as
  "carryon serve --agents FILE" would at its start, without serving: every key known, every
  reference defined, every *_env variable set in this environment. It prints the profiles
  (provider, model, tools with effect classes and approvals, digest) and exits 0, or prints
  what is wrong with its line and key and exits 1. docs/AGENTS.md describes the file.

Examples:
  carryon agents check agents.yaml
  OLLAMA_KEY=... carryon agents check /etc/carryon/agents.yaml --json`

func runAgents(_ context.Context, args []string, getenv env, stdout io.Writer) error {
	fs := newFlagSet("agents", agentsUsage, stdout)
	asJSON := fs.Bool("json", false, "print the profiles as GET /v1/agents answers them")
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
	set, err := agents.Load(pos[0], agents.Options{Getenv: getenv, Builtin: hub.BuiltinTools(getenv)})
	if err != nil {
		return err
	}
	list := &carryon.AgentList{}
	for _, n := range set.Names() {
		a, _ := set.Agent(n)
		list.Items = append(list.Items, a)
	}
	if *asJSON {
		return printJSON(stdout, list)
	}
	fmt.Fprintf(stdout, "%s: %d agent profiles, valid\n", pos[0], len(list.Items))
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tPROVIDER\tMODEL\tSTEPS\tBUDGET\tDIGEST")
	for _, a := range list.Items {
		fmt.Fprintf(tw, "%s\t%s (%s)\t%s\t%d\t%d\t%s\n", a.Name, a.Provider, a.ProviderKind, a.Model, a.MaxSteps, a.ContextBudget, a.Digest)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, a := range list.Items {
		var tools []string
		for _, t := range a.Tools {
			s := t.Name + " (" + string(t.Effect)
			if t.Approval == carryon.ApprovalAlways {
				s += ", approval always"
			}
			tools = append(tools, s+")")
		}
		for _, m := range a.MCPServers {
			tools = append(tools, "tools of MCP server "+m.Name+" ("+m.Transport+")")
		}
		// What the profile says of tools found at run time (an MCP server's).
		for _, name := range remoteNames(a) {
			s := name + " ("
			if e, ok := a.Effects[name]; ok {
				s += string(e)
			} else {
				s += string(carryon.EffectUnsafe)
			}
			if a.Approval[name] == carryon.ApprovalAlways {
				s += ", approval always"
			}
			tools = append(tools, s+")")
		}
		fmt.Fprintf(stdout, "%s: %s\n", a.Name, strings.Join(tools, ", "))
	}
	return nil
}

// remoteNames are the tools the profile's effects or approvals name that are not built in, sorted.
func remoteNames(a *carryon.Agent) []string {
	builtin := map[string]bool{}
	for _, t := range a.Tools {
		builtin[t.Name] = true
	}
	var out []string
	for _, m := range []map[string]string{effectNames(a.Effects), a.Approval} {
		for name := range m {
			if !builtin[name] && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}

func effectNames(m map[string]carryon.EffectClass) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}
