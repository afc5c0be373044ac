package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/jsongate"
	"github.com/google/jsonschema-go/jsonschema"
)

// The seed corpus is in testdata/fuzz/FuzzDecodeArgs/: duplicate names, names in another case,
// lone surrogates, NUL escapes, large numbers, deep nesting.

// FuzzDecodeArgs: whatever the arguments of remember (whose value is free JSON), the MCP
// argument decoder never panics and answers either arguments or an EINVALID error with a
// message; what it accepts encodes with encoding/json, and that encoding passes the gate
// (readable back, at most jsongate.MaxDepth deep) and decodes to the same value again.
func FuzzDecodeArgs(f *testing.F) {
	schema, err := jsonschema.For[rememberArgs](nil)
	if err != nil {
		f.Fatal(err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		in, err := decodeArgs[rememberArgs]("remember", args, resolved)
		if err != nil {
			if carryon.ErrorCode(err) != carryon.EINVALID || carryon.ErrorMessage(err) == "" {
				t.Fatalf("error %v for %q", err, args)
			}
			return
		}
		again, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("accepted %q but cannot encode it: %v", args, err)
		}
		if err := jsongate.CheckValue(again); err != nil {
			t.Fatalf("accepted %q, but not its encoding %s: %v", args, again, err)
		}
		back, err := decodeArgs[rememberArgs]("remember", again, resolved)
		if err != nil {
			t.Fatalf("accepted %q, but not its encoding %s: %v", args, again, err)
		}
		if b, _ := json.Marshal(back); string(b) != string(again) {
			t.Fatalf("%q decodes to %s, then to %s", args, again, b)
		}
	})
}
