package sessions

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/carryon-hub/carryon"
)

// decodeAny reads one JSON value with its numbers kept as json.Number, as working memory is.
func decodeAny(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return nil, false
	}
	return v, true
}

// FuzzMergePatch checks JSON Merge Patch (RFC 7396) on any target and patch (seed corpus in
// testdata/fuzz/FuzzMergePatch): it never panics, the result is valid JSON, applying the patch
// again changes nothing (a merge patch is idempotent), a patch object's null members are gone
// from the result and its other members there, and a patch that is not an object replaces the
// target whole (numbers written exactly as they came).
func FuzzMergePatch(f *testing.F) {
	f.Fuzz(func(t *testing.T, target, patch []byte) {
		tv, ok1 := decodeAny(target)
		pv, ok2 := decodeAny(patch)
		if !ok1 || !ok2 {
			return
		}
		once, err := json.Marshal(carryon.MergePatch(tv, pv))
		if err != nil || !json.Valid(once) {
			t.Fatalf("merge of %s into %s: %s, %v", patch, target, once, err)
		}
		ov, _ := decodeAny(once)
		pv, _ = decodeAny(patch) // the first merge may share parts of the patch
		twice, err := json.Marshal(carryon.MergePatch(ov, pv))
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("patch %s applied to %s once gives %s, twice %s", patch, target, once, twice)
		}
		if !applied(ov, pv) {
			t.Fatalf("patch %s applied to %s gives %s, which keeps a member it deletes or lacks one it sets", patch, target, once)
		}
		if _, isObject := pv.(map[string]any); !isObject {
			if want, _ := json.Marshal(pv); !bytes.Equal(once, want) {
				t.Fatalf("a patch that is not an object replaces the target: got %s, want %s", once, want)
			}
		}
	})
}

// applied reports whether result shows every member of a patch object: a null member is gone, an
// object member is applied below, any other member is there.
func applied(result, patch any) bool {
	p, ok := patch.(map[string]any)
	if !ok {
		return true
	}
	r, ok := result.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range p {
		got, has := r[k]
		switch v.(type) {
		case nil:
			if has {
				return false
			}
		case map[string]any:
			if !has || !applied(got, v) {
				return false
			}
		default:
			if !has {
				return false
			}
		}
	}
	return true
}
