package openaiapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/openai/openai-go/v3/conversations"
)

// The input gate on the OpenAI-compatible routes: a field in another case, a name twice in an
// object, invalid UTF-8, a lone surrogate, a NUL, a number beyond a float, nesting deeper than
// every client reads back, and a field the specification does not define are each 400 in
// OpenAI's error shape naming the field, and nothing is stored (no conversation, no item, no
// response).
func TestGateOnCompatRoutes(t *testing.T) {
	t.Parallel()
	for name, open := range envDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testGate(t, open(t))
		})
	}
}

func testGate(t *testing.T, e *env) {
	conv, err := e.client(e.aliceKey).Conversations.New(t.Context(), conversations.ConversationNewParams{})
	if err != nil {
		t.Fatal(err)
	}
	items := "/v1/conversations/" + conv.ID + "/items"
	deep := strings.Repeat(`[`, 9000) + strings.Repeat(`]`, 9000)
	for _, c := range []struct{ path, body, param, msg string }{
		{"/v1/conversations", `{"ITEMS":[{"role":"user","content":"hi"}]}`, "ITEMS", "did you mean 'items'"},
		{items, `{"ITEMS":[{"role":"user","content":"hi"}]}`, "ITEMS", "did you mean 'items'"},
		{items, `{"items":[{"ROLE":"user","content":"hi"}]}`, "items[0].ROLE", "did you mean 'role'"},
		{"/v1/responses", `{"INPUT":"hi"}`, "INPUT", "did you mean 'input'"},
		{"/v1/responses", `{"input":"hi","no_such_parameter":1}`, "no_such_parameter", "Unknown parameter: 'no_such_parameter'."},
		{items, `{"items":[{"role":"user","role":"system","content":"hi"}]}`, "items[0].role", `duplicate field "role"`},
		{"/v1/conversations", `{"items":[{"role":"user","content":"hi"}],"items":[]}`, "items", `duplicate field "items"`},
		{"/v1/responses", `{"input":"hi","user":"a\ud800"}`, "user", "lone UTF-16 surrogate"},
		{items, `{"items":[{"role":"user","content":"\udc00"}]}`, "items[0].content", "lone UTF-16 surrogate"},
		{"/v1/responses", `{"input":"hi","user":"a\u0000"}`, "user", "user contains a NUL character"},
		{"/v1/responses", `{"input":"hi","reasoning":{"effort":"\u0000"}}`, "reasoning.effort", "contains a NUL character"},
		{"/v1/responses", `{"input":"hi","text":{"n":1e400}}`, "text.n", "beyond the range of a 64-bit float"},
		{"/v1/responses", `{"input":"hi","temperature":1e400}`, "temperature", "beyond the range of a 64-bit float"},
		{items, `{"items":[{"role":"user","content":[{"type":"input_text","text":"hi","x":` + deep + `}]}]}`, "items[0].content[0].x" + strings.Repeat("[0]", 123), "nested more than 128 levels deep"},
		{"/v1/responses", `{"input":"hi","text":` + deep + `}`, "text" + strings.Repeat("[0]", 127), "nested more than 128 levels deep"},
		{items, `{"items":[{"type":"function_call","call_id":"c","name":"f","arguments":"{\"a\":1,\"a\":2}"}]}`, "items[0].arguments.a", `duplicate field "a"`},
		{items, `{"items":[{"type":"function_call","call_id":"c","name":"f","arguments":"{\"a\":\"\\u0000\"}"}]}`, "items[0].arguments.a", "NUL"},
	} {
		status, answer := post(t, e, c.path, c.body)
		wantParam(t, c.path, c.body, status, answer, c.param, c.msg)
	}
	// Invalid UTF-8 in an echoed field, which SQLite would have kept as sent.
	for _, body := range []string{"{\"input\":\"hi\",\"user\":\"\xff\"}", "{\"input\":\"hi\",\"text\":{\"format\":\"\xc3\"}}", "{\"input\":\"hi\",\"reasoning\":{\"summary\":\"\xed\xa0\x80\"}}"} {
		status, answer := post(t, e, "/v1/responses", body)
		if status != http.StatusBadRequest || !strings.Contains(answer, "not valid UTF-8") || !strings.Contains(answer, `"invalid_request_error"`) {
			t.Errorf("%q: %d %s, want 400 not valid UTF-8", body, status, answer)
		}
	}
	page, err := e.sessions.List(e.alice, carryon.SessionFilter{})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("sessions %+v, %v: want only the conversation", page, err)
	}
	msgs, err := e.sessions.ListMessages(e.alice, conv.ID, carryon.MessageFilter{})
	if err != nil || len(msgs.Items) != 0 {
		t.Fatalf("the conversation has %d messages, %v", len(msgs.Items), err)
	}
	// What the gate allows still passes: the same name in different objects, a pair of
	// surrogates, a small number, nesting within the limit, every specification field.
	ok := `{"items":[{"role":"user","content":[{"type":"input_text","text":"\ud83d\ude00"}]},{"role":"user","content":"x"}]}`
	if status, answer := post(t, e, items, ok); status != http.StatusOK {
		t.Fatalf("%s: %d %s", ok, status, answer)
	}
}

// wantParam checks an answer is OpenAI's 400 invalid_request_error naming param, with msg in
// its message.
func wantParam(t *testing.T, path, body string, status int, answer, param, msg string) {
	t.Helper()
	var env struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    string  `json:"code"`
		} `json:"error"`
	}
	if len(body) > 200 {
		body = body[:200] + "…"
	}
	if err := json.Unmarshal([]byte(answer), &env); err != nil || status != http.StatusBadRequest {
		t.Errorf("%s %s: %d %s, want 400", path, body, status, answer)
		return
	}
	e := env.Error
	if e.Type != "invalid_request_error" || e.Code != carryon.EINVALID || e.Param == nil || *e.Param != param || !strings.Contains(e.Message, msg) {
		t.Errorf("%s %s: %s, want param %q and %q in the message", path, body, answer, param, msg)
	}
}
