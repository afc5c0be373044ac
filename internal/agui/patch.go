package agui

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// patchOp is one RFC 6902 JSON Patch operation of a STATE_DELTA.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// diff returns the JSON Patch that turns document a into b: objects are compared member by
// member (remove, add, or the difference of the two values), anything else that differs is
// replaced whole. Members go in name order, so the same documents give the same patch.
func diff(a, b any) []patchOp {
	var ops []patchOp
	diffAt("", a, b, &ops)
	return ops
}

func diffAt(path string, a, b any, ops *[]patchOp) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if !sameJSON(a, b) {
			*ops = append(*ops, patchOp{Op: "replace", Path: path, Value: nullable(b)})
		}
		return
	}
	names := make([]string, 0, len(am)+len(bm))
	for k := range am {
		names = append(names, k)
	}
	for k := range bm {
		if _, ok := am[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		p := path + "/" + escapePointer(k)
		av, inA := am[k]
		bv, inB := bm[k]
		switch {
		case !inB:
			*ops = append(*ops, patchOp{Op: "remove", Path: p})
		case !inA:
			*ops = append(*ops, patchOp{Op: "add", Path: p, Value: nullable(bv)})
		default:
			diffAt(p, av, bv, ops)
		}
	}
}

// nullable keeps a JSON null value in an operation (omitempty would drop it).
func nullable(v any) any {
	if v == nil {
		return json.RawMessage("null")
	}
	return v
}

// escapePointer escapes a member name as a JSON Pointer reference token (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// sameJSON reports whether two decoded values encode to the same JSON (encoding/json sorts
// object members, so equal documents encode equally).
func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// decodeDoc decodes a JSON document with its numbers kept exact (json.Number).
func decodeDoc(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
