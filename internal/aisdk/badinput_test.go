package aisdk_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestBadInput: each malformed request is refused with a problem+json answer whose detail says
// what is wrong, and changes nothing: no session, no run.
func TestBadInput(t *testing.T) {
	msg := func(parts ...string) string {
		return `{"id":"c","trigger":"submit-message","messages":[{"id":"m","role":"user","parts":[` + strings.Join(parts, ",") + `]}]}`
	}
	text := `{"type":"text","text":"hi"}`
	cases := []struct {
		name, body string
		status     int
		detail     string
	}{
		{"not JSON", `{"id":`, 400, "JSON"},
		{"empty body", ``, 400, "needs a JSON body"},
		{"a name twice", `{"id":"c","id":"d","messages":[]}`, 400, "id"},
		{"an unknown field", `{"id":"c","messages":[],"model":"x"}`, 400, "model"},
		{"a field in another case", `{"ID":"c","messages":[]}`, 400, "ID"},
		{"a NUL", `{"id":"c\u0000","messages":[]}`, 400, "NUL"},
		{"no id", `{"trigger":"submit-message","messages":[{"id":"m","role":"user","parts":[` + text + `]}]}`, 400, "id (the chat id) is required"},
		{"a long id", `{"id":"` + strings.Repeat("x", 201) + `","messages":[{"id":"m","role":"user","parts":[` + text + `]}]}`, 400, "longer than 200"},
		{"no messages", `{"id":"c","trigger":"submit-message","messages":[]}`, 400, "at least the new message"},
		{"an unknown trigger", `{"id":"c","trigger":"resume-stream","messages":[{"id":"m","role":"user","parts":[` + text + `]}]}`, 400, "trigger must be"},
		{"regenerate", `{"id":"c","trigger":"regenerate-message","messageId":"m","messages":[{"id":"m","role":"user","parts":[` + text + `]}]}`, 400, "regenerate-message is not supported"},
		{"an unknown role", `{"id":"c","messages":[{"id":"m","role":"tool","parts":[` + text + `]}]}`, 400, "role must be"},
		{"a system message last", `{"id":"c","messages":[{"id":"m","role":"system","parts":[` + text + `]}]}`, 400, "the last message is a system message"},
		{"an unknown part type", msg(text, `{"type":"image","url":"x"}`), 400, `type "image", which is not a UI message part type`},
		{"a part without type", msg(`{"text":"hi"}`), 400, "has no type"},
		{"a part that is no object", msg(`"hi"`), 400, "part object"},
		{"a text part without text", msg(`{"type":"text"}`), 400, "without text"},
		{"a file part", msg(text, `{"type":"file","mediaType":"image/png","url":"data:image/png;base64,AA=="}`), 400, "file part"},
		{"no text", msg(`{"type":"step-start"}`), 400, "has no text"},
		{"a tool part in a bad state", msg(text, `{"type":"tool-x","toolCallId":"c1","state":"done"}`), 400, "state must be one of"},
		{"a tool part without call id", msg(text, `{"type":"tool-x","state":"input-available"}`), 400, "without toolCallId"},
		{"an approval response without approval", msg(text, `{"type":"tool-x","toolCallId":"c1","state":"approval-responded"}`), 400, "without approval"},
		{"a bad client tool", `{"id":"c","messages":[{"id":"m","role":"user","parts":[` + text + `]}],"tools":{"bad name!":{"description":"x"}}}`, 400, "bad name!"},
		{"a message over the limit", msg(`{"type":"text","text":"` + strings.Repeat("x", 1<<20+1) + `"}`), 400, "limit"},
		{"a body over the limit", msg(`{"type":"text","text":"` + strings.Repeat("x", 4<<20) + `"}`), 413, "larger than"},
		{"an assistant message with nothing to answer", `{"id":"c","messages":[{"id":"m","role":"assistant","parts":[` + text + `]}]}`, 404, `chat "c" not found`},
	}
	onStores(t, false, func(t *testing.T, e *env) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				wantProblem(t, e.do(t, e.aliceKey, "POST", "/v1/ai-sdk/chat", c.body), c.status, c.detail)
				if n := e.sessionCount(t); n != 0 {
					t.Fatalf("%d sessions after a refused request", n)
				}
			})
		}
		t.Run("not JSON content", func(t *testing.T) {
			req, _ := http.NewRequest("POST", e.url+"/v1/ai-sdk/chat", strings.NewReader(msg(text)))
			req.Header.Set("Authorization", "Bearer "+e.aliceKey)
			req.Header.Set("Content-Type", "text/plain")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			wantProblem(t, read(t, res), 415, "application/json")
		})
		t.Run("no route", func(t *testing.T) {
			wantProblem(t, e.do(t, e.aliceKey, "GET", "/v1/ai-sdk/chat", nil), 405, "no route GET")
			wantProblem(t, e.do(t, e.aliceKey, "GET", "/v1/ai-sdk/other", nil), 404, "no route GET")
		})
		t.Run("no key", func(t *testing.T) {
			wantProblem(t, e.do(t, "", "POST", "/v1/ai-sdk/chat", msg(text)), 401, "")
		})
	})
}

// TestAnotherUsersChat: another user's session id as the chat id is a 404, exactly as a missing
// one, and makes no session; the same client-chosen chat id of two users names two sessions.
func TestAnotherUsersChat(t *testing.T) {
	onStores(t, false, func(t *testing.T, e *env) {
		wantStream(t, e.chat(t, e.aliceKey, "shared-name", "m1", "alice here", nil))
		sid := e.runOf(t, "shared-name").SessionID
		theirs := e.chat(t, e.bobKey, sid, "m1", "bob here", nil)
		missing := e.chat(t, e.bobKey, "sess_missing", "m1", "bob here", nil)
		wantProblem(t, theirs, 404, "not found")
		wantProblem(t, missing, 404, "not found")
		if strings.ReplaceAll(theirs.body, sid, "X") != strings.ReplaceAll(missing.body, "sess_missing", "X") {
			t.Fatalf("another user's session %s and a missing one answer differently:\n%s\n%s", sid, theirs.body, missing.body)
		}
		bob := e.chat(t, e.bobKey, "shared-name", "m1", "bob here", nil)
		wantStream(t, bob)
		if bob.text() != "You said: bob here" || len(e.messages(t, sid)) != 2 {
			t.Fatalf("bob's chat: %q; alice's session holds %q", bob.text(), e.messages(t, sid))
		}
	})
}
