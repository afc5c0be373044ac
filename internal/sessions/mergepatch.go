package sessions

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strings"

	"github.com/carryon-hub/carryon"
)

// decodePatch reads a working memory patch: a JSON object (a merge patch whose null members
// delete keys) with valid text, its numbers kept as json.Number so that they are stored exactly
// as written (an integer above 2^53 is not rounded through float64).
func decodePatch(raw json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var patch map[string]any
	if err := dec.Decode(&patch); err != nil || patch == nil || dec.More() {
		return nil, carryon.Errorf(carryon.EINVALID, "patch must be a JSON object (a JSON Merge Patch, RFC 7396)")
	}
	if err := carryon.CheckJSONText("patch", raw); err != nil {
		return nil, err
	}
	return patch, nil
}

// effectivePatch returns the members of the merge patch that change cur: a member whose value
// is the one cur has already (compared decoded, numbers as written) is dropped, a null member
// only stays when cur has its key, and an object member applied to an object is reduced the same
// way (dropped when nothing in it changes). Applying the result to cur gives what applying patch
// gives; patch and cur are not changed (the result shares their values).
func effectivePatch(cur, patch map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range patch {
		old, had := cur[k]
		switch pv := v.(type) {
		case nil:
			if had {
				out[k] = nil
			}
		case map[string]any:
			if om, ok := old.(map[string]any); ok {
				if sub := effectivePatch(om, pv); len(sub) > 0 {
					out[k] = sub
				}
			} else {
				out[k] = v
			}
		default:
			if !had || !reflect.DeepEqual(old, v) {
				out[k] = v
			}
		}
	}
	return out
}

// diffDocs lists the changes from a to b as JSON Pointer paths, recursing into objects; arrays
// and scalars are compared whole.
func diffDocs(prefix string, a, b map[string]any, out []carryon.WorkingMemoryEdit) []carryon.WorkingMemoryEdit {
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
			out = append(out, carryon.WorkingMemoryEdit{Path: path, Op: "added", New: bv})
		case !inB:
			out = append(out, carryon.WorkingMemoryEdit{Path: path, Op: "removed", Old: av})
		default:
			am, aObj := av.(map[string]any)
			bm, bObj := bv.(map[string]any)
			if aObj && bObj {
				out = diffDocs(path, am, bm, out)
			} else if !reflect.DeepEqual(av, bv) {
				out = append(out, carryon.WorkingMemoryEdit{Path: path, Op: "changed", Old: av, New: bv})
			}
		}
	}
	return out
}
