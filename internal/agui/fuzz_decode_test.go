package agui

import (
	"bytes"
	"net/http/httptest"
	"testing"
	"unicode/utf8"

	"github.com/carryon-hub/carryon"
)

// FuzzDecodeInput: any body either decodes to an input whose every message converts (and whose
// text is valid UTF-8), or is refused with invalid_request; decoding never panics.
func FuzzDecodeInput(f *testing.F) {
	for _, s := range []string{
		`{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":"hi"}]}`,
		`{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],"state":{"a":null}}`,
		`{"threadId":"t","runId":"r","messages":[{"id":"a","role":"assistant","toolCalls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]},{"id":"t","role":"tool","toolCallId":"c","content":"ok"}]}`,
		`{"threadId":"t","runId":"r","messages":[],"resume":[{"interruptId":"act_1","status":"resolved","payload":{"decision":"reject"}}]}`,
		`{"threadId":"t","runId":"r","messages":[{"id":"x","role":"reasoning","content":"hm"}],"forwardedProps":{"carryon":{"expected_version":3}}}`,
		`{"threadId":"t","runId":"r","messages":[{"id":"m","role":"robot"}]}`,
		`{"threadId":1}`, `[]`, `{"threadId":"t","threadId":"u"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest("POST", Path, bytes.NewReader(body))
		in, err := decodeInput(r)
		if err != nil {
			if code := carryon.ErrorCode(err); code != carryon.EINVALID {
				t.Fatalf("refusal %v has code %q", err, code)
			}
			return
		}
		if _, err := props(in.ForwardedProps); err != nil && carryon.ErrorCode(err) != carryon.EINVALID {
			t.Fatalf("forwardedProps: %v", err)
		}
		for _, m := range in.Messages {
			nm, skip := newMessage(m)
			if skip {
				continue
			}
			if !nm.Role.Valid() || !utf8.ValidString(nm.Content) {
				t.Fatalf("message %+v converted to %+v", m, nm)
			}
		}
	})
}
