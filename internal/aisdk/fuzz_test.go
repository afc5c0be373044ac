package aisdk

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzDecodeChat: the chat request decoder never panics, and what it accepts has a chat id, a
// message and only parts of the AI SDK's types.
func FuzzDecodeChat(f *testing.F) {
	for _, seed := range []string{
		`{"id":"c","trigger":"submit-message","messages":[{"id":"m","role":"user","parts":[{"type":"text","text":"hi"}]}]}`,
		`{"id":"c","messages":[{"id":"m","role":"assistant","parts":[{"type":"step-start"},{"type":"tool-x","toolCallId":"c1","state":"output-available","input":{},"output":"ok"}]}]}`,
		`{"id":"c","messages":[{"id":"m","role":"assistant","parts":[{"type":"dynamic-tool","toolName":"t","toolCallId":"c1","state":"approval-responded","approval":{"id":"a","approved":false}}]}]}`,
		`{"id":"c","messages":[{"role":"user","parts":[{"type":"data-x","data":{}},{"type":"file","url":"u","mediaType":"text/plain"}]}],"tools":{"t":{"inputSchema":{}}}}`,
		`{"id":"c","trigger":"regenerate-message","messageId":"m","messages":[]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "/v1/ai-sdk/chat", strings.NewReader(body))
		req, err := decodeChat(r)
		if err != nil {
			return
		}
		if req.ID == "" || len(req.Messages) == 0 {
			t.Fatalf("accepted a request without id or messages: %s", body)
		}
		for _, m := range req.Messages {
			for _, raw := range m.Parts {
				if _, err := parsePart(raw, "part"); err != nil {
					t.Fatalf("accepted a part it refuses: %s", raw)
				}
			}
		}
	})
}
