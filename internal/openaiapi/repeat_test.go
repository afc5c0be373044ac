package openaiapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// raw sends a request to the server as alice, with the Idempotency-Key key when not empty, and
// returns the answer's status and body as sent.
func (e *env) raw(t *testing.T, method, path, key, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer "+e.aliceKey)
	r.Header.Set("Content-Type", "application/json")
	if key != "" {
		r.Header.Set("Idempotency-Key", key)
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

// field is a string field of a JSON answer.
func field(t *testing.T, body []byte, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("answer %s: %v", body, err)
	}
	s, _ := m[name].(string)
	return s
}

const weatherJSON = `{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}`

// TestRepeatedWritesAnswerTheFirst: every write route of the Conversations and Responses APIs,
// sent again with its Idempotency-Key after it succeeded, answers the first answer byte for byte
// and writes nothing (no session, fork, version or run more). The repeats that lookups used to
// break: an item delete (the item is gone, 404 before), a response continuing the latest response
// (its own run came after, so the repeat forked: 422 before), function call outputs found by the
// conversation (its run no longer waits: 400 before).
func TestRepeatedWritesAnswerTheFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var conv, item, r1 string
	// waitFor makes a response that waits for get_weather's output (extra: more request fields),
	// without a key, and returns it with its conversation.
	waitFor := func(extra string) (id, conversation string) {
		status, body := e.raw(t, "POST", "/v1/responses", "", `{"model":"m","input":"what is the weather?","tools":[`+weatherJSON+`]`+extra+`}`)
		var r struct {
			ID           string `json:"id"`
			Conversation struct {
				ID string `json:"id"`
			} `json:"conversation"`
		}
		if status != 200 || json.Unmarshal(body, &r) != nil || !strings.Contains(string(body), `"call_id":"call_w1"`) {
			t.Fatalf("a response calling get_weather: %d %s", status, body)
		}
		return r.ID, r.Conversation.ID
	}
	// Each write: how to make its request (once; the repeat sends the same) and what to keep of
	// its answer.
	for _, c := range []struct {
		name    string
		request func() (method, path, body string)
		then    func(body []byte)
	}{
		{"create a conversation", func() (string, string, string) {
			return "POST", "/v1/conversations", `{"metadata":{"topic":"repeats"},"items":[{"type":"message","role":"user","content":"hello"}]}`
		}, func(b []byte) { conv = field(t, b, "id") }},
		{"update it", func() (string, string, string) {
			return "POST", "/v1/conversations/" + conv, `{"metadata":{"topic":"again"}}`
		}, nil},
		{"add items", func() (string, string, string) {
			return "POST", "/v1/conversations/" + conv + "/items",
				`{"items":[{"type":"message","role":"user","content":"one"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"two"}]}]}`
		}, func(b []byte) { item = field(t, b, "first_id") }},
		{"delete an item", func() (string, string, string) {
			return "DELETE", "/v1/conversations/" + conv + "/items/" + item, ""
		}, nil},
		{"a response on the conversation", func() (string, string, string) {
			return "POST", "/v1/responses", `{"model":"m","input":"third","conversation":"` + conv + `"}`
		}, func(b []byte) { r1 = field(t, b, "id") }},
		{"a response continuing the latest", func() (string, string, string) {
			return "POST", "/v1/responses", `{"model":"m","input":"fourth","previous_response_id":"` + r1 + `"}`
		}, nil},
		{"a response continuing an older one (a fork)", func() (string, string, string) {
			return "POST", "/v1/responses", `{"model":"m","input":"another fourth","previous_response_id":"` + r1 + `"}`
		}, nil},
		{"a response on a new conversation", func() (string, string, string) {
			return "POST", "/v1/responses", `{"model":"m","input":"alone","metadata":{"k":"v"}}`
		}, nil},
		{"outputs by previous_response_id", func() (string, string, string) {
			w, _ := waitFor("")
			return "POST", "/v1/responses", `{"model":"m","previous_response_id":"` + w + `","input":[{"type":"function_call_output","call_id":"call_w1","output":"sunny"}]}`
		}, nil},
		{"outputs by conversation", func() (string, string, string) {
			_, wc := waitFor("")
			return "POST", "/v1/responses", `{"model":"m","conversation":"` + wc + `","input":[{"type":"function_call_output","call_id":"call_w1","output":"rain"}]}`
		}, nil},
		{"cancel a waiting response", func() (string, string, string) {
			w, _ := waitFor("")
			return "POST", "/v1/responses/" + w + "/cancel", ""
		}, nil},
		{"delete the conversation", func() (string, string, string) {
			return "DELETE", "/v1/conversations/" + conv, ""
		}, nil},
	} {
		key := strings.ReplaceAll(c.name, " ", "-")
		method, path, body := c.request()
		status, first := e.raw(t, method, path, key, body)
		if status != http.StatusOK {
			t.Fatalf("%s: %d %s", c.name, status, first)
		}
		if c.then != nil {
			c.then(first)
		}
		before := e.sessionsState(t)
		status2, again := e.raw(t, method, path, key, body)
		if status2 != status || string(again) != string(first) {
			t.Errorf("%s, repeated: %d %s\nthe first answer: %d %s", c.name, status2, again, status, first)
		}
		if after := e.sessionsState(t); after != before {
			t.Errorf("%s: the repeat wrote:\n%s\nbecame\n%s", c.name, before, after)
		}
	}
}
