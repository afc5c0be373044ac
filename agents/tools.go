package agents

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/tool"
)

// Tools returns the tools a run of profile p gets: the built-in tools and the tools the named
// sources offer now (sources maps an MCP server's name to its tool.Source; the profile's globs
// decide which sources are asked), selected by the globs, with the profile's effect overrides
// applied. A source that cannot answer leaves its tools out and its error in the returned error,
// which is the joined errors of every such source; the tools returned are usable either way, and
// the caller decides whether a run goes on without the missing ones. A source's tool that has the
// name of a built-in one, or of another source's, is left out with an error too.
func Tools(ctx context.Context, p *Profile, builtin []tool.Tool, sources map[string]tool.Source) ([]tool.Tool, error) {
	all := slices.Clone(builtin)
	var errs []error
	seen := map[string]bool{}
	for _, t := range builtin {
		seen[t.Name()] = true
	}
	for _, name := range p.MCPServers() {
		src, ok := sources[name]
		if !ok {
			continue // nothing serves it (yet): the profile gets none of its tools
		}
		offered, err := src.Tools(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("MCP server %s: %w", name, err))
			continue
		}
		slices.SortFunc(offered, func(a, b tool.Tool) int { return strings.Compare(a.Name(), b.Name()) })
		for _, t := range offered {
			if seen[t.Name()] {
				errs = append(errs, fmt.Errorf("MCP server %s offers a tool named %s, which another tool has; it is left out", name, t.Name()))
				continue
			}
			seen[t.Name()] = true
			all = append(all, t)
		}
	}
	return Select(p, all), errors.Join(errs...)
}

// Select returns the tools of offered that the profile's globs select, in order, each reporting
// the profile's effect class for it when the profile overrides it.
func Select(p *Profile, offered []tool.Tool) []tool.Tool {
	var out []tool.Tool
	for _, t := range offered {
		if !selected(p.Tools, t.Name()) {
			continue
		}
		if e, ok := p.Effects[t.Name()]; ok && e != t.Effect() {
			t = withEffect(t, e)
		}
		out = append(out, t)
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
