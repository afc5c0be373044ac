package openaiapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
)

// longInput is a conversation of n turns, each about 40 tokens, as input items ending with a
// user message.
func longInput(n int) []any {
	var items []any
	for i := 1; i <= n; i++ {
		items = append(items,
			map[string]any{"role": "user", "content": fmt.Sprintf("Turn %d: look at module %d, list what it imports and which of its functions are slow, with file names.", i, i)},
			map[string]any{"role": "assistant", "content": fmt.Sprintf("Module %d imports three packages and its parser is slow.", i)})
	}
	return append(items, map[string]any{"role": "user", "content": "and now?"})
}

// context_management compacts the conversation before the model call whose context is over
// compact_threshold: the response's output starts with the compaction item, the model was sent
// the summary, and the output fed back as input (as a stateless client chains) continues the
// compacted conversation without storing its items twice.
func TestContextManagementCompacts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	input := longInput(12)
	body, _ := json.Marshal(map[string]any{"model": "fake", "input": input,
		"context_management": []any{map[string]any{"type": "compaction", "compact_threshold": 300}}})
	status, r := e.post(t, e.aliceKey, "/v1/responses", string(body))
	if status != 200 || r["status"] != "completed" {
		t.Fatalf("answered %d %v", status, r)
	}
	output := r["output"].([]any)
	first, _ := output[0].(map[string]any)
	last, _ := output[len(output)-1].(map[string]any)
	if len(output) != 2 || first["type"] != "compaction" || !strings.HasPrefix(first["encrypted_content"].(string), "cmp1.") ||
		!strings.HasPrefix(first["id"].(string), "cmp_") || last["type"] != "message" {
		t.Fatalf("output %v: want the compaction item, then the answer", output)
	}
	e.model.mu.Lock()
	sent := e.model.reqs[len(e.model.reqs)-1]
	e.model.mu.Unlock()
	if !strings.Contains(sent.System, contextbuild.HeadingSummary) || len(sent.Messages) >= 25 {
		t.Fatalf("the model was sent %d messages, system:\n%s", len(sent.Messages), sent.System)
	}
	conv := r["conversation"].(map[string]any)["id"].(string)
	page, err := e.sessions.ListCompactions(e.alice, conv)
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("compactions: %v %+v", err, page)
	}
	stored, err := e.sessions.ListMessages(e.alice, conv, carryon.MessageFilter{Limit: 200})
	if err != nil {
		t.Fatal(err)
	}

	// Chained: the input, the output and a new message.
	next := append(append(input, output...), map[string]any{"role": "user", "content": "go on"})
	body, _ = json.Marshal(map[string]any{"model": "fake", "input": next})
	status, r2 := e.post(t, e.aliceKey, "/v1/responses", string(body))
	if status != 200 || r2["status"] != "completed" || r2["conversation"].(map[string]any)["id"] != conv {
		t.Fatalf("the chained request answered %d %v", status, r2)
	}
	after, err := e.sessions.ListMessages(e.alice, conv, carryon.MessageFilter{Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Items) != len(stored.Items)+2 {
		t.Fatalf("%d messages after the chained request, %d before: want its user message and answer only", len(after.Items), len(stored.Items))
	}

	// Refused: nothing runs.
	for _, tc := range []struct{ cm, param string }{
		{`[{"type":"truncation"}]`, "context_management[0].type"},
		{`[{"type":"compaction","compact_threshold":0}]`, "context_management[0].compact_threshold"},
		{`[{"type":"compaction","compact_threshold":1.5}]`, "context_management[0].compact_threshold"},
		{`{"type":"compaction"}`, "context_management"},
	} {
		before := e.model.calls()
		status, r := e.post(t, e.aliceKey, "/v1/responses", `{"model":"fake","input":"hi","context_management":`+tc.cm+`}`)
		errObj, _ := r["error"].(map[string]any)
		if status != 400 || errObj["param"] != tc.param || e.model.calls() != before {
			t.Errorf("%s: answered %d %v, want 400 naming %s", tc.cm, status, r, tc.param)
		}
	}
}

// calls is how many requests the model was sent.
func (m *fakeModel) calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.reqs)
}

// The stream of a response that compacted has the compaction item as the specification
// streams an output item (output_item.added, output_item.done) before the answer's.
func TestContextManagementStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body, _ := json.Marshal(map[string]any{"model": "fake", "input": longInput(12), "stream": true,
		"context_management": []any{map[string]any{"type": "compaction", "compact_threshold": 300}}})
	req, _ := http.NewRequest("POST", e.url+"/v1/responses", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+e.aliceKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var kinds []string
	var done map[string]any
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		typ := ev["type"].(string)
		if it, ok := ev["item"].(map[string]any); ok {
			typ += ":" + it["type"].(string)
		}
		kinds = append(kinds, typ)
		if ev["type"] == "response.completed" {
			done = ev["response"].(map[string]any)
		}
	}
	got := strings.Join(kinds, " ")
	if !strings.Contains(got, "response.in_progress response.output_item.added:compaction response.output_item.done:compaction response.output_item.added:message") {
		t.Fatalf("stream: %s", got)
	}
	if out := done["output"].([]any); len(out) != 2 || out[0].(map[string]any)["type"] != "compaction" {
		t.Fatalf("the completed response's output: %v", out)
	}
}

// A request that continues a compaction, repeated with its Idempotency-Key, answers the first
// response: the repeat's input, stored by the first request, is not taken for items sent back.
func TestCompactedInputRepeat(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	status, c := e.post(t, e.aliceKey, "/v1/responses/compact", `{"model":"fake","input":"the code word is ZEBRA"}`)
	if status != 200 {
		t.Fatalf("compact answered %d %v", status, c)
	}
	output := c["output"].([]any)
	item, _ := json.Marshal(output[len(output)-1])
	next := `{"model":"fake","input":[` + string(item) + `,{"role":"user","content":"go on"}]}`
	var ids []any
	for range 2 {
		req, _ := http.NewRequest("POST", e.url+"/v1/responses", strings.NewReader(next))
		req.Header.Set("Authorization", "Bearer "+e.aliceKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "turn-1")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var r map[string]any
		_ = json.NewDecoder(res.Body).Decode(&r)
		res.Body.Close()
		if res.StatusCode != 200 || r["status"] != "completed" {
			t.Fatalf("answered %d %v", res.StatusCode, r)
		}
		ids = append(ids, r["id"])
	}
	if ids[0] != ids[1] {
		t.Fatalf("the repeat answered %v, the first %v", ids[1], ids[0])
	}
}

// After a /v1/responses/compact, a turn whose run calls a tool of carryon's own stores the call
// and its output, which the response's output does not show: a stateless client that chains
// the turn back after the compaction item sends the answer without them, and neither the
// answer nor the turn is stored again.
func TestCompactedInputSkipsOwnToolCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	status, c := e.post(t, e.aliceKey, "/v1/responses/compact", `{"model":"fake","input":"the code word is ZEBRA"}`)
	if status != 200 {
		t.Fatalf("compact answered %d %v", status, c)
	}
	input := c["output"].([]any)
	input = append(input, map[string]any{"role": "user", "content": "note it, then answer"})
	body, _ := json.Marshal(map[string]any{"model": "fake", "input": input})
	status, r := e.post(t, e.aliceKey, "/v1/responses", string(body))
	if status != 200 || r["status"] != "completed" {
		t.Fatalf("answered %d %v", status, r)
	}
	output := r["output"].([]any)
	if len(output) != 1 || output[0].(map[string]any)["type"] != "message" {
		t.Fatalf("output %v: want the answer only (carryon's own tool call is no item)", output)
	}
	conv := r["conversation"].(map[string]any)["id"].(string)
	stored, err := e.sessions.ListMessages(e.alice, conv, carryon.MessageFilter{Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, m := range stored.Items {
		if m.Role == carryon.RoleTool {
			calls++
		}
	}
	if calls != 1 {
		t.Fatalf("the run stored %d tool results, want the one of update_working_memory", calls)
	}

	next := append(append(input, output...), map[string]any{"role": "user", "content": "go on"})
	body, _ = json.Marshal(map[string]any{"model": "fake", "input": next})
	status, r2 := e.post(t, e.aliceKey, "/v1/responses", string(body))
	if status != 200 || r2["status"] != "completed" || r2["conversation"].(map[string]any)["id"] != conv {
		t.Fatalf("the chained request answered %d %v", status, r2)
	}
	after, err := e.sessions.ListMessages(e.alice, conv, carryon.MessageFilter{Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Items) != len(stored.Items)+2 {
		var got []string
		for _, m := range after.Items[len(stored.Items):] {
			got = append(got, string(m.Role)+": "+m.Content)
		}
		t.Fatalf("the chained request stored %q: want its user message and answer only", got)
	}
}
