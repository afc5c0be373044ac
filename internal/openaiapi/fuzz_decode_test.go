package openaiapi

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/jsongate"
)

// The seed corpus is in testdata/fuzz/FuzzDecodeItems/: duplicate names, names in another case,
// lone surrogates, NUL escapes, large numbers, deep nesting, function call arguments.

// FuzzDecodeItems: whatever the body of an item create, the compatible door's decoder never
// panics and answers either messages or an EINVALID error with a message; what it accepts
// passes the gate again after encoding, and every message it makes stores JSON that
// encoding/json reads back and that passes the gate (so is at most jsongate.MaxDepth deep).
func FuzzDecodeItems(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest("POST", "/v1/conversations/x/items", bytes.NewReader(body))
		var in itemsRequest
		err := decodeBody(r, &in, false)
		var msgs []carryon.NewMessage
		if err == nil {
			msgs, err = messagesOf(in.Items, "items")
		}
		if err != nil {
			if carryon.ErrorCode(err) != carryon.EINVALID || carryon.ErrorMessage(err) == "" {
				t.Fatalf("error %v for %q", err, body)
			}
			return
		}
		again, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("accepted %q but cannot encode it: %v", body, err)
		}
		if err := jsongate.Check(again, nil); err != nil {
			t.Fatalf("accepted %q, but not its encoding %s: %v", body, again, err)
		}
		for _, m := range msgs {
			for _, raw := range []json.RawMessage{m.Metadata, m.ToolCalls} {
				if len(raw) == 0 {
					continue
				}
				var v any
				if err := json.Unmarshal(raw, &v); err != nil {
					t.Fatalf("%q stores %s, which does not read back: %v", body, raw, err)
				}
				// Tool calls wrap the arguments (checked on their own) in two levels.
				if err := jsongate.CheckValue(raw); err != nil && (!strings.Contains(err.Error(), "nested more than") || depth(raw) > jsongate.MaxDepth+2) {
					t.Fatalf("%q stores %s, which the gate refuses: %v", body, raw, err)
				}
			}
		}
	})
}

// depth is how deeply objects and arrays nest in the JSON value raw.
func depth(raw []byte) int {
	dec := json.NewDecoder(bytes.NewReader(raw))
	d, most := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return most
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			d++
			most = max(most, d)
		case json.Delim('}'), json.Delim(']'):
			d--
		}
	}
}
