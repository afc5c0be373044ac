package agui

import (
	"encoding/json"
	"strings"
	"testing"
)

// The patch diff makes turns a into b, with the member names escaped as JSON Pointers, null
// values kept, and nothing for equal documents.
func TestDiff(t *testing.T) {
	cases := []struct{ a, b, want string }{
		{`{}`, `{}`, `[]`},
		{`{"a":1}`, `{"a":1}`, `[]`},
		{`{"a":1}`, `{"a":2}`, `[{"op":"replace","path":"/a","value":2}]`},
		{`{"a":1,"b":2}`, `{"b":2,"c":3}`, `[{"op":"remove","path":"/a"},{"op":"add","path":"/c","value":3}]`},
		{`{"x":{"a/b":1,"m~n":2}}`, `{"x":{"a/b":3}}`, `[{"op":"replace","path":"/x/a~1b","value":3},{"op":"remove","path":"/x/m~0n"}]`},
		{`{"l":[1,2]}`, `{"l":[1,2,3]}`, `[{"op":"replace","path":"/l","value":[1,2,3]}]`},
		{`{"a":{"b":1}}`, `{"a":"s"}`, `[{"op":"replace","path":"/a","value":"s"}]`},
		{`{"a":1}`, `{"a":null}`, `[{"op":"replace","path":"/a","value":null}]`},
		{`{"n":12345678901234567}`, `{"n":12345678901234568}`, `[{"op":"replace","path":"/n","value":12345678901234568}]`},
	}
	for _, c := range cases {
		a, _ := decodeDoc([]byte(c.a))
		b, _ := decodeDoc([]byte(c.b))
		ops := diff(a, b)
		got, _ := json.Marshal(ops)
		if len(ops) == 0 {
			got = []byte("[]")
		}
		if string(got) != c.want {
			t.Errorf("diff(%s, %s) = %s, want %s", c.a, c.b, got, c.want)
		}
		if res := apply(t, a, got); !sameJSON(res, b) {
			t.Errorf("diff(%s, %s) applied gives %v", c.a, c.b, res)
		}
	}
}

// apply applies a patch of add, remove and replace operations on objects.
func apply(t *testing.T, doc any, patch []byte) any {
	t.Helper()
	var ops []struct {
		Op, Path string
		Value    json.RawMessage
	}
	if err := json.Unmarshal(patch, &ops); err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		v, _ := decodeDoc(op.Value)
		if op.Path == "" {
			doc = v
			continue
		}
		parts := strings.Split(op.Path[1:], "/")
		cur := doc.(map[string]any)
		for _, p := range parts[:len(parts)-1] {
			cur = cur[unescape(p)].(map[string]any)
		}
		key := unescape(parts[len(parts)-1])
		if op.Op == "remove" {
			delete(cur, key)
		} else {
			cur[key] = v
		}
	}
	return doc
}

func unescape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}
