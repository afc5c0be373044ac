package sessions

import (
	"reflect"
	"sort"
	"strings"

	"github.com/carryon-hub/carryon"
)

// mergePatch applies an RFC 7396 JSON Merge Patch to target (values decoded by encoding/json).
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

// diffDocs lists the changes from a to b as JSON Pointer paths, recursing into objects; arrays
// and scalars are compared whole.
func diffDocs(prefix string, a, b map[string]any, out []carryon.MemoryEdit) []carryon.MemoryEdit {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		path := prefix + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
		av, inA := a[k]
		bv, inB := b[k]
		switch {
		case !inA:
			out = append(out, carryon.MemoryEdit{Path: path, Op: "added", New: bv})
		case !inB:
			out = append(out, carryon.MemoryEdit{Path: path, Op: "removed", Old: av})
		default:
			am, aObj := av.(map[string]any)
			bm, bObj := bv.(map[string]any)
			if aObj && bObj {
				out = diffDocs(path, am, bm, out)
			} else if !reflect.DeepEqual(av, bv) {
				out = append(out, carryon.MemoryEdit{Path: path, Op: "changed", Old: av, New: bv})
			}
		}
	}
	return out
}
