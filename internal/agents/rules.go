package agents

import (
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/carryon-hub/carryon"
)

// The rules of a profile are its effects and approval: maps from a tool name, or a glob over tool
// names, to the effect class or approval its calls run with. A tool takes, from each map, the key
// that names it exactly, or else the longest glob key that matches it (the most specific one),
// or else the default: the effect class the tool declares (unsafe for an MCP tool) and approval
// never. Two glob keys of the same length that match one tool with different values are an error
// (checked wherever the tool is known), so the order of the file never decides.
//
// Every key must match a tool the profile really has: a typo is an error, never a rule that
// silently applies to nothing. Built-in tools are known at load (validate.go); an MCP server's
// are known once it lists them, and check.go checks the keys that name them then.

// Rule is what a profile says of one of its tools: the effect class and approval its calls run
// with, and the keys of the agents file that set them ("" where the default holds).
type Rule struct {
	// Effect is the effect class the tool's calls are journaled and recovered by.
	Effect carryon.EffectClass
	// EffectKey is the key of effects that set Effect ("" for the tool's own class).
	EffectKey string
	// Approval is always or never.
	Approval string
	// ApprovalKey is the key of approval that set Approval ("" for the default, never).
	ApprovalKey string
}

// Rule returns the rule of the tool called name, which declares the effect class declared.
func (p *Profile) Rule(name string, declared carryon.EffectClass) Rule {
	r := Rule{Effect: declared, Approval: carryon.ApprovalNever}
	if k, e, ok := lookup(p.Effects, name); ok {
		r.Effect, r.EffectKey = e, k
	}
	if k, a, ok := lookup(p.Approval, name); ok {
		r.Approval, r.ApprovalKey = a, k
	}
	return r
}

// isGlob reports whether a key or a tool entry is a glob rather than one tool's name.
func isGlob(s string) bool { return strings.ContainsAny(s, `*?[\`) }

// lookup returns the key of m that decides for the tool called name, and its value: the exact
// key, else the longest matching glob (of equal ones, the first in sorted order).
func lookup[V any](m map[string]V, name string) (string, V, bool) {
	if v, ok := m[name]; ok {
		return name, v, true
	}
	best, found := "", false
	for k := range m {
		if !isGlob(k) {
			continue
		}
		if ok, _ := path.Match(k, name); ok && (!found || len(k) > len(best) || len(k) == len(best) && k < best) {
			best, found = k, true
		}
	}
	if !found {
		var zero V
		return "", zero, false
	}
	return best, m[best], true
}

// ambiguity returns two glob keys of m that both decide for the tool called name (the longest
// that match, of one length) with different values; "" when there are none.
func ambiguity[V comparable](m map[string]V, name string) (string, string) {
	if _, ok := m[name]; ok {
		return "", ""
	}
	key, v, ok := lookup(m, name)
	if !ok {
		return "", ""
	}
	for _, k := range sortedKeys(m) {
		if k != key && isGlob(k) && len(k) == len(key) && m[k] != v {
			if ok, _ := path.Match(k, name); ok {
				return key, k
			}
		}
	}
	return "", ""
}

// matchesAny reports whether the glob or name g matches one of names.
func matchesAny(g string, names []string) bool {
	for _, n := range names {
		if ok, _ := path.Match(g, n); ok {
			return true
		}
	}
	return false
}

// suggest names the candidates nearest to name ("nearest: a, b"), or when none is near, the
// candidates themselves ("what + a, b, c, and 4 more"); what is what the candidates are.
func suggest(name string, candidates []string, what string) string {
	limit := max(2, len(name)/4)
	type near struct {
		name string
		d    int
	}
	var close []near
	for _, c := range candidates {
		if d := distance(strings.ToLower(name), strings.ToLower(c)); d <= limit {
			close = append(close, near{c, d})
		}
	}
	if len(close) > 0 {
		slices.SortFunc(close, func(a, b near) int {
			if a.d != b.d {
				return a.d - b.d
			}
			return strings.Compare(a.name, b.name)
		})
		var out []string
		for _, c := range close[:min(3, len(close))] {
			out = append(out, c.name)
		}
		return "nearest: " + strings.Join(out, ", ")
	}
	return enumerate(candidates, what)
}

// enumerate says the names, sorted, after what ("they are: a, b, c, and 4 more"), or that there
// are none.
func enumerate(names []string, what string) string {
	if len(names) == 0 {
		return what + " none"
	}
	sorted := slices.Sorted(slices.Values(names))
	const shown = 8
	if len(sorted) <= shown {
		return what + " " + strings.Join(sorted, ", ")
	}
	return what + " " + strings.Join(sorted[:shown], ", ") + ", and " + strconv.Itoa(len(sorted)-shown) + " more"
}

// distance is the optimal string alignment distance of a and b: the insertions, deletions,
// substitutions and swaps of two neighbours that turn one into the other (bmup → bump is 1).
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
