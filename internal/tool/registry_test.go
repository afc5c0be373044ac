package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
)

// fake is a tool with a given schema that records its calls.
type fake struct {
	name, schema string
	calls        []tool.Call
}

func (f *fake) Name() string                { return f.name }
func (f *fake) Description() string         { return "fake " + f.name }
func (f *fake) Schema() json.RawMessage     { return json.RawMessage(f.schema) }
func (f *fake) Effect() carryon.EffectClass { return carryon.EffectRead }
func (f *fake) Call(_ context.Context, c tool.Call) (tool.Result, error) {
	f.calls = append(f.calls, c)
	return tool.Result{Content: "ok " + string(c.Args)}, nil
}

const pathSchema = `{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer"}},
	"required":["path"],"additionalProperties":false}`

func TestNewRegistryRefusesDuplicatesAndBadSchemas(t *testing.T) {
	t.Parallel()
	if _, err := tool.NewRegistry(&fake{name: "a", schema: pathSchema}, &fake{name: "a", schema: pathSchema}); err == nil ||
		!strings.Contains(err.Error(), `duplicate tool name "a"`) {
		t.Fatalf("duplicate names: err = %v", err)
	}
	for _, bad := range []string{
		``,
		`{"type":`,
		`{"type":"array","items":{"type":"string"}}`,
		`{"properties":{}}`,
		`{"type":"object","properties":{"a":{"type":"strng"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`,
	} {
		if _, err := tool.NewRegistry(&fake{name: "t", schema: bad}); err == nil {
			t.Errorf("schema %q was accepted", bad)
		} else if carryon.ErrorCode(err) != carryon.EINVALID {
			t.Errorf("schema %q: code = %q, want %q", bad, carryon.ErrorCode(err), carryon.EINVALID)
		}
	}
	if _, err := tool.NewRegistry(&fake{name: "", schema: pathSchema}); err == nil {
		t.Error("an empty name was accepted")
	}
}

func TestRegistryListsSorted(t *testing.T) {
	t.Parallel()
	r, err := tool.NewRegistry(&fake{name: "zeta", schema: pathSchema}, &fake{name: "alpha", schema: pathSchema},
		tool.UpdateWorkingMemory())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range r.List() {
		names = append(names, x.Name())
	}
	if got := strings.Join(names, ","); got != "alpha,update_working_memory,zeta" {
		t.Fatalf("List = %s", got)
	}
	specs := r.Specs()
	if len(specs) != 3 || specs[0].Name != "alpha" || specs[0].Description != "fake alpha" ||
		string(specs[0].Parameters) != pathSchema {
		t.Fatalf("Specs = %+v", specs)
	}
	if x, ok := r.Get("zeta"); !ok || x.Name() != "zeta" {
		t.Fatal("Get(zeta) failed")
	}
	if _, ok := r.Get("nope"); ok {
		t.Fatal("Get(nope) found a tool")
	}
}

func TestInvokeValidatesArguments(t *testing.T) {
	t.Parallel()
	f := &fake{name: "read", schema: pathSchema}
	r, err := tool.NewRegistry(f, tool.UpdateWorkingMemory())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool, args, field string
		want              []string
	}{
		{"nope", `{}`, "", []string{`unknown tool "nope"`, "read, update_working_memory"}},
		{"read", `{"path":`, "", []string{"invalid arguments for read", "not valid JSON"}},
		{"read", `{}`, "path", []string{`missing required field "path"`}},
		{"read", ``, "path", []string{`missing required field "path"`}},
		{"read", `{"path":3}`, "path", []string{`field "path" must be of type string, not integer`}},
		{"read", `{"path":"a","n":1.5}`, "n", []string{`field "n" must be of type integer, not number`}},
		{"read", `{"path":"a","mode":"x"}`, "mode", []string{`unexpected field "mode"`}},
		{"read", `["a"]`, "", []string{`must be of type object, not array`}},
		{"update_working_memory", `{"patch":"goal"}`, "patch", []string{`field "patch" must be of type object, not string`}},
		{"update_working_memory", `{"patch":{"plan":[{"title":"x","status":"started"}]}}`, "patch.plan[].status",
			[]string{`field "patch.plan[].status" must be one of [todo doing done], not started`}},
		{"update_working_memory", `{"patch":{"plan":[{"status":"todo"}]}}`, "patch.plan[].title",
			[]string{`missing required field "patch.plan[].title"`}},
		{"update_working_memory", `{"patch":{"goal":3}}`, "patch.goal",
			[]string{`field "patch.goal" must be of type string or null, not integer`}},
		{"update_working_memory", `{"patch":{"notes":[1]}}`, "patch.notes[]",
			[]string{`field "patch.notes[]" must be of type string, not integer`}},
	} {
		_, err := r.Invoke(context.Background(), tc.tool, tool.Call{Args: json.RawMessage(tc.args)})
		var ae *tool.ArgumentError
		if !errors.As(err, &ae) {
			t.Errorf("%s %s: err = %v, want an *ArgumentError", tc.tool, tc.args, err)
			continue
		}
		if ae.Field != tc.field {
			t.Errorf("%s %s: Field = %q, want %q", tc.tool, tc.args, ae.Field, tc.field)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %s: message %q does not contain %q", tc.tool, tc.args, err.Error(), w)
			}
		}
		if carryon.ErrorCode(err) != carryon.EINVALID || carryon.ErrorMessage(err) != err.Error() {
			t.Errorf("%s %s: code %q message %q", tc.tool, tc.args, carryon.ErrorCode(err), carryon.ErrorMessage(err))
		}
	}
	if len(f.calls) != 0 {
		t.Fatalf("the tool ran %d times on invalid arguments", len(f.calls))
	}
}

func TestInvokeCallsTheTool(t *testing.T) {
	t.Parallel()
	f := &fake{name: "read", schema: `{"type":"object","properties":{"path":{"type":"string"}}}`}
	r, err := tool.NewRegistry(f)
	if err != nil {
		t.Fatal(err)
	}
	c := tool.Call{Args: json.RawMessage(` {"path":"a.txt"} `), SessionID: "s1", RunID: "r1", IdempotencyKey: "r1/0/0", Workspace: "/w"}
	res, err := r.Invoke(context.Background(), "read", c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != `ok {"path":"a.txt"}` || len(f.calls) != 1 {
		t.Fatalf("result %q, calls %d", res.Content, len(f.calls))
	}
	got := f.calls[0]
	if got.SessionID != "s1" || got.RunID != "r1" || got.IdempotencyKey != "r1/0/0" || got.Workspace != "/w" {
		t.Fatalf("call fields lost: %+v", got)
	}
	if _, err := r.Invoke(context.Background(), "read", tool.Call{}); err != nil {
		t.Fatalf("empty arguments: %v", err)
	}
	if string(f.calls[1].Args) != "{}" {
		t.Fatalf("empty arguments reached the tool as %q, want {}", f.calls[1].Args)
	}
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	// sha256 of "abc".
	const want = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := tool.Fingerprint([]byte("abc")); got != want {
		t.Fatalf("Fingerprint = %s", got)
	}
}
