package agents

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
)

// Tools returns the tools a run of profile p gets: the built-in tools and the tools the named
// sources offer now (sources maps an MCP server's name to its tool.Source; the profile's globs
// decide which sources are asked), selected by the globs, with the profile's effect overrides
// applied.
//
// A source that cannot answer leaves its tools out and its error in missing, which joins the
// errors of every such source (and of a source's tool that has the name of a built-in one, or of
// another source's, which is left out too); the tools returned are usable either way, and the
// caller decides whether a run goes on without the missing ones.
//
// err is not nil when a key of the profile's effects or approval, or an entry of its tools, names
// tools of a server that answered and matches none of them (a typo, or a tool the server no
// longer has): then tools is nil and the run must not go on, since a rule the file meant for a
// tool would not apply to it. err is EINVALID and names each such key as a load error does
// (FILE:LINE: KEY), with the nearest names the server lists.
func Tools(ctx context.Context, p *Profile, builtin []tool.Tool, sources map[string]tool.Source) (tools []tool.Tool, missing, err error) {
	off := offer(ctx, p, builtin, sources)
	got := Select(p, off.tools)
	if probs := p.listedProblems(names(got), off.listed); len(probs) > 0 {
		return nil, off.missing, p.fitError(probs)
	}
	return got, off.missing, nil
}

// offered is what the built-in tools and the sources of a profile's MCP servers offer.
type offered struct {
	tools []tool.Tool
	// server is the MCP server of each of tools by name ("" for a built-in tool).
	server map[string]string
	// listed are the names each server that answered lists, by the server's name.
	listed map[string][]string
	// missing joins the errors of the servers that did not answer and of the tools left out.
	missing error
}

// offer asks the sources of the profile's MCP servers for their tools, after the built-in ones.
func offer(ctx context.Context, p *Profile, builtin []tool.Tool, sources map[string]tool.Source) *offered {
	off := &offered{tools: slices.Clone(builtin), server: map[string]string{}, listed: map[string][]string{}}
	var errs []error
	for _, t := range builtin {
		off.server[t.Name()] = ""
	}
	for _, name := range p.Sources() {
		src, ok := sources[name]
		if !ok {
			continue // nothing serves it (yet): the profile gets none of its tools
		}
		kind := "MCP server"
		if slices.Contains(p.a2a, name) {
			kind = "A2A agent"
		}
		listed, err := src.Tools(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", kind, name, err))
			continue
		}
		slices.SortFunc(listed, func(a, b tool.Tool) int { return strings.Compare(a.Name(), b.Name()) })
		off.listed[name] = names(listed)
		for _, t := range listed {
			if _, taken := off.server[t.Name()]; taken {
				errs = append(errs, fmt.Errorf("%s %s offers a tool named %s, which another tool has; it is left out", kind, name, t.Name()))
				continue
			}
			off.server[t.Name()] = name
			off.tools = append(off.tools, t)
		}
	}
	off.missing = errors.Join(errs...)
	return off
}

func names(tools []tool.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name()
	}
	return out
}

// Select returns the tools of offered that the profile's globs select, in order, each reporting
// the profile's effect class for it (its Rule) when the profile overrides it.
func Select(p *Profile, offered []tool.Tool) []tool.Tool {
	var out []tool.Tool
	for _, t := range offered {
		if !selected(p.Tools, t.Name()) {
			continue
		}
		if e := p.Rule(t.Name(), t.Effect()).Effect; e != t.Effect() {
			t = withEffect(t, e)
		}
		out = append(out, t)
	}
	return out
}

// ListTools asks the sources (the MCP servers, by name) for their tools and returns the view of
// every profile with every tool a run of it would get now, the MCP servers' too, each with the
// effect class and approval it runs with: what `carryon agents check` prints. Its error names,
// in the file's order, every key that matches none of the tools its server lists (EINVALID, as
// Tools), and every server that did not answer (EUNAVAILABLE when that is all that is wrong).
func (s *Set) ListTools(ctx context.Context, builtin []tool.Tool, sources map[string]tool.Source) (*carryon.AgentList, error) {
	out := &carryon.AgentList{Items: []*carryon.Agent{}, Memory: s.Memory()}
	var wrong, down []string
	for _, name := range s.Names() {
		p := s.Profiles[name]
		off := offer(ctx, p, builtin, sources)
		got := Select(p, off.tools)
		if probs := p.listedProblems(names(got), off.listed); len(probs) > 0 {
			wrong = append(wrong, p.explain(probs))
		}
		for _, a := range p.A2AAgents() {
			if c, ok := sources[a].(tool.Checker); ok {
				if err := c.Check(ctx); err != nil {
					off.missing = errors.Join(off.missing, fmt.Errorf("A2A agent %s: %w", a, err))
				}
			}
		}
		if off.missing != nil {
			for _, line := range strings.Split(off.missing.Error(), "\n") {
				if !slices.Contains(down, line) {
					down = append(down, line)
				}
			}
		}
		v := *s.views[name]
		v.Tools = toolViews(p, got, off.server)
		out.Items = append(out.Items, &v)
	}
	switch {
	case len(wrong) > 0:
		return out, carryon.Errorf(carryon.EINVALID, "%s", strings.Join(append(wrong, down...), "; "))
	case len(down) > 0:
		return out, carryon.Errorf(carryon.EUNAVAILABLE, "%s", strings.Join(down, "; "))
	}
	return out, nil
}

// toolViews are the public views of a profile's selected tools; server names the MCP server of
// each tool ("" or absent for a built-in one).
func toolViews(p *Profile, tools []tool.Tool, server map[string]string) []carryon.AgentTool {
	out := []carryon.AgentTool{}
	for _, t := range tools {
		v := carryon.AgentTool{Name: t.Name(), Effect: t.Effect(), Approval: p.ApprovalOf(t.Name())}
		if s := server[t.Name()]; slices.Contains(p.a2a, s) {
			v.A2AAgent = s
		} else {
			v.MCPServer = s
		}
		out = append(out, v)
	}
	return out
}

// withEffect wraps a tool to report another effect class; a tool that reconciles keeps doing so.
func withEffect(t tool.Tool, e carryon.EffectClass) tool.Tool {
	if r, ok := t.(tool.Reconciler); ok {
		return reconcilingEffectTool{effectTool{t, e}, r}
	}
	return effectTool{t, e}
}

// effectTool is a tool whose effect class the profile overrides.
type effectTool struct {
	tool.Tool
	effect carryon.EffectClass
}

// Effect returns the profile's effect class for the tool.
func (t effectTool) Effect() carryon.EffectClass { return t.effect }

// reconcilingEffectTool is an effectTool over a tool that implements tool.Reconciler.
type reconcilingEffectTool struct {
	effectTool
	r tool.Reconciler
}

// Reconcile asks the wrapped tool.
func (t reconcilingEffectTool) Reconcile(ctx context.Context, c tool.Call) (tool.Outcome, error) {
	return t.r.Reconcile(ctx, c)
}
