package jsongate

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

type item struct {
	Role    string         `json:"role"`
	Content string         `json:"content"`
	Meta    map[string]any `json:"metadata"`
}

type body struct {
	Items []item          `json:"items"`
	Free  json.RawMessage `json:"free"`
}

// Every rule refuses with a sentence that says what and where, and the path apart.
func TestRefusals(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	for _, c := range []struct{ in, path, msg string }{
		{`{"ITEMS":[]}`, "ITEMS", `unknown field "ITEMS": field names are case-sensitive; did you mean "items"?`},
		{`{"items":[{"role":"user","role":"system"}]}`, "items[0].role", `duplicate field "role" in items[0]`},
		{`{"items":[{"rol\u0065":"user","role":"system"}]}`, "items[0].role", `duplicate field "role"`},
		{`{"items":[{"content":"a\u0000"}]}`, "items[0].content", `items[0].content contains a NUL character`},
		{`{"items":[{"metadata":{"k\u0000":1}}]}`, "items[0].metadata", `a name in items[0].metadata contains a NUL character`},
		{`{"items":[{"content":"\ud800"}]}`, "items[0].content", `field "items[0].content" holds \ud800, a lone UTF-16 surrogate`},
		{"{\"items\":[{\"content\":\"\xff\"}]}", "items[0].content", `items[0].content is not valid UTF-8`},
		{`{"items":[{"metadata":{"n":1e400}}]}`, "items[0].metadata.n", `field "items[0].metadata.n" is the number 1e400`},
		{`{"free":` + deep + `}`, "free" + strings.Repeat("[0]", MaxDepth-1), `is nested more than 128 levels deep`},
		{`{"free":{"a":1,"a":2}}`, "free.a", `duplicate field "a" in free`},
		{`{"items":[]} {}`, "", `exactly one JSON value`},
		{`{"items":[{"role":1}]}`, "items.role", `field "items.role" must be a string, not number`},
	} {
		var v body
		err := Decode([]byte(c.in), &v)
		var ge *Error
		if !errors.As(err, &ge) || !strings.Contains(ge.Error(), c.msg) || ge.Path != c.path {
			t.Errorf("%s: got %v (path %q), want %q at %q", c.in, err, pathOf(ge), c.msg, c.path)
		}
	}
}

func pathOf(e *Error) string {
	if e == nil {
		return ""
	}
	return e.Path
}

// What the rules allow passes: deep nesting up to the limit, pairs of surrogates, small numbers,
// the same name in different objects.
func TestAccepted(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	for _, in := range []string{
		deep, `"\ud83d\ude00"`, `1e-700`, `[{"a":1},{"a":2}]`, `{"a":{"a":1}}`, `"é"`, `null`,
	} {
		if err := CheckValue([]byte(in)); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
	var v body
	if err := Decode([]byte(`{"items":[{"role":"user","metadata":{"big":9007199254740993}}]}`), &v); err != nil {
		t.Fatal(err)
	}
	if n := v.Items[0].Meta["big"]; n != json.Number("9007199254740993") {
		t.Errorf("big = %v", n)
	}
	if err := Check([]byte(`{"x":1}`), reflect.TypeFor[map[string]int]()); err != nil {
		t.Error(err)
	}
}
