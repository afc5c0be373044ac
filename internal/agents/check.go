package agents

import (
	"fmt"
	"slices"
	"strings"

	"github.com/carryon-hub/carryon"
)

// keySource is where a profile's keys are written: the agents file and the lines of its keys, so
// that a key found wrong at run time is reported as a load error is ("FILE:LINE: KEY: …").
type keySource struct {
	file string
	pos  *filePositions
}

// problem is one key of a profile that does not fit its tools: path is the key's path under the
// profile ("approval.counter__bmup", "tools[1]").
type problem struct {
	path string
	msg  string
}

// place says where the key path under profile p is written: "FILE:LINE: agents.NAME.PATH", or
// the bare path for a profile of no file (the flags').
func (p *Profile) place(path string) (string, int) {
	full := "agents." + p.Name + "." + path
	if p.src == nil {
		return full, 0
	}
	line := p.src.pos.line(full)
	return fmt.Sprintf("%s:%d: %s", p.src.file, line, full), line
}

// explain turns problems into one sentence per key, in the file's order, joined by "; ".
func (p *Profile) explain(probs []problem) string {
	type said struct {
		line int
		text string
	}
	var out []said
	for _, pr := range probs {
		where, line := p.place(pr.path)
		out = append(out, said{line, where + ": " + pr.msg})
	}
	slices.SortStableFunc(out, func(a, b said) int { return a.line - b.line })
	texts := make([]string, len(out))
	for i, s := range out {
		texts[i] = s.text
	}
	return strings.Join(texts, "; ")
}

// ambiguities are the glob keys that decide for one of the tools called names with different
// values from a glob key of the same length (see lookup).
func (p *Profile) ambiguities(names []string) []problem {
	var out []problem
	seen := map[string]bool{}
	add := func(kind, a, b, name string) {
		if a == "" || seen[kind+a+"\x00"+b] {
			return
		}
		seen[kind+a+"\x00"+b] = true
		out = append(out, problem{kind + "." + a, fmt.Sprintf("and %s.%s both match %s, with different values, and neither is more specific (longer); add a key that names %s exactly", kind, b, name, name)})
	}
	for _, n := range names {
		a, b := ambiguity(p.Effects, n)
		add("effects", a, b, n)
		a, b = ambiguity(p.Approval, n)
		add("approval", a, b, n)
	}
	return out
}

// listedProblems are the keys of p's effects and approval, and the entries of its tools, that name
// tools of the MCP servers that listed theirs (listed: a server's name → the names it offers) and
// match none of them; have are the names of every tool the profile got (built-in ones too). A key
// of a server that did not answer is not checked: none of that server's tools are offered.
func (p *Profile) listedProblems(have []string, listed map[string][]string) []problem {
	var probs []problem
	servers := p.MCPServers()
	answered := func(s string) bool { _, ok := listed[s]; return ok }
	all := true
	for _, s := range servers {
		all = all && answered(s)
	}
	for _, m := range []struct {
		kind string
		keys []string
	}{{"effects", sortedKeys(p.Effects)}, {"approval", sortedKeys(p.Approval)}} {
		for _, k := range m.keys {
			server, named := serverOf(k)
			mine := named && slices.Contains(servers, server)
			switch {
			case !isGlob(k):
				if !mine || !answered(server) || slices.Contains(have, k) {
					continue // a built-in tool's name was checked at load
				}
				probs = append(probs, problem{m.kind + "." + k, fmt.Sprintf("the agent's tools do not include %s: MCP server %s lists no such tool (%s)",
					k, server, suggest(k, listed[server], "it lists:"))})
			case matchesAny(k, have):
			case mine && answered(server) || !named && all:
				probs = append(probs, problem{m.kind + "." + k, fmt.Sprintf("matches none of the agent's tools (%s)", suggest(k, have, "they are:"))})
			}
		}
	}
	for i, g := range p.Tools {
		server, named := serverOf(g)
		if !named || !answered(server) || matchesAny(g, listed[server]) {
			continue
		}
		what := fmt.Sprintf("%q is not a tool of MCP server %s (%s)", g, server, suggest(g, listed[server], "it lists:"))
		if isGlob(g) {
			what = fmt.Sprintf("%q matches no tool of MCP server %s (%s)", g, server, enumerate(listed[server], "it lists:"))
		}
		probs = append(probs, problem{fmt.Sprintf("tools[%d]", i), what})
	}
	return append(probs, p.ambiguities(have)...)
}

// fitError is the error of a profile whose keys do not fit what its MCP servers list.
func (p *Profile) fitError(probs []problem) error {
	return carryon.Errorf(carryon.EINVALID, "the agents file names tools that the MCP servers of agent %s do not list, so its runs fail until the file is fixed: %s",
		p.Name, p.explain(probs))
}
