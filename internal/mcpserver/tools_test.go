package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestToolsList(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	cs := e.connect(e.aliceKey)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.CacheScope != "private" {
		t.Errorf("tools/list cacheScope = %q, want private", res.CacheScope)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		byName[tl.Name] = tl
	}
	// name → readOnly, idempotent, destructive ("-" when a read has no destructive hint)
	want := map[string]struct {
		readOnly, idempotent bool
		destructive          string
		args                 []string
	}{
		"list_sessions":           {true, true, "-", []string{"status", "limit", "cursor"}},
		"get_session":             {true, true, "-", []string{"session_id", "messages"}},
		"create_session":          {false, false, "false", []string{"title", "working_memory", "external_id", "request_id"}},
		"append_messages":         {false, false, "false", []string{"session_id", "messages", "expected_version", "request_id"}},
		"update_working_memory":   {false, true, "false", []string{"session_id", "patch", "expected_version", "request_id"}},
		"remember":                {false, true, "true", []string{"namespace", "key", "value", "text", "request_id"}},
		"recall":                  {true, true, "-", []string{"query", "namespace", "limit", "mode", "min_score"}},
		"forget":                  {false, true, "true", []string{"namespace", "key", "request_id"}},
		"delete_message":          {false, false, "true", []string{"session_id", "seq", "expected_version", "request_id"}},
		"start_run":               {false, false, "true", []string{"session_id", "message", "request_id", "expected_version"}},
		"create_webhook":          {false, false, "false", []string{"url", "events", "session_id"}},
		"list_webhooks":           {true, true, "-", nil},
		"get_webhook":             {true, true, "-", []string{"webhook_id"}},
		"update_webhook":          {false, true, "true", []string{"webhook_id", "url", "events", "paused"}},
		"delete_webhook":          {false, true, "true", []string{"webhook_id"}},
		"rotate_webhook_secret":   {false, false, "true", []string{"webhook_id", "previous_valid_seconds"}},
		"list_webhook_deliveries": {true, true, "-", []string{"webhook_id", "limit", "cursor"}},
		"redeliver_webhook":       {false, false, "false", []string{"webhook_id", "delivery_id"}},
	}
	if len(byName) != len(want) {
		t.Errorf("tools: got %d, want %d", len(byName), len(want))
	}
	for name, w := range want {
		tl := byName[name]
		if tl == nil {
			t.Errorf("tool %s missing", name)
			continue
		}
		a := tl.Annotations
		d := "-"
		if a.DestructiveHint != nil {
			d = map[bool]string{true: "true", false: "false"}[*a.DestructiveHint]
		}
		if a.ReadOnlyHint != w.readOnly || a.IdempotentHint != w.idempotent || d != w.destructive {
			t.Errorf("%s: readOnly %v idempotent %v destructive %s, want %v %v %s", name, a.ReadOnlyHint, a.IdempotentHint, d, w.readOnly, w.idempotent, w.destructive)
		}
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Additional *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal([]byte(mustJSON(t, tl.InputSchema)), &schema); err != nil {
			t.Fatal(err)
		}
		var got []string
		for k := range schema.Properties {
			got = append(got, k)
		}
		slices.Sort(got)
		wantArgs := slices.Sorted(slices.Values(w.args))
		if !slices.Equal(got, wantArgs) {
			t.Errorf("%s arguments: got %v, want %v", name, got, wantArgs)
		}
		if schema.Additional == nil || *schema.Additional {
			t.Errorf("%s accepts unknown arguments", name)
		}
	}
}

func TestSessionTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	cs := e.connect(e.aliceKey)

	created := ok(t, cs, "create_session", map[string]any{"title": "report", "request_id": "c1",
		"working_memory": map[string]any{"goal": "write the report", "next_action": "outline"}})
	id, _ := created["id"].(string)
	if !strings.HasPrefix(id, "sess_") || created["replayed"] != false {
		t.Fatalf("create_session: %v", created)
	}
	again := ok(t, cs, "create_session", map[string]any{"title": "report", "request_id": "c1",
		"working_memory": map[string]any{"goal": "write the report", "next_action": "outline"}})
	if again["id"] != id || again["replayed"] != true {
		t.Fatalf("create_session repeated with its request_id made another session: %v", again)
	}

	// append_messages twice with one request id: one message.
	args := map[string]any{"session_id": id, "request_id": "a1", "expected_version": 1,
		"messages": []any{map[string]any{"role": "user", "content": "start with the outline"}}}
	first := ok(t, cs, "append_messages", args)
	second := ok(t, cs, "append_messages", args)
	if first["replayed"] != false || second["replayed"] != true || first["version"] != second["version"] || first["session_id"] != id {
		t.Fatalf("append twice: %v then %v", first, second)
	}
	got := ok(t, cs, "get_session", map[string]any{"session_id": id})
	if got["message_count"] != float64(1) || len(got["messages"].([]any)) != 1 || got["version"] != first["version"] {
		t.Fatalf("after two appends with one request id: %v", got)
	}
	if wm := got["working_memory"].(map[string]any); wm["goal"] != "write the report" {
		t.Fatalf("get_session working memory: %v", wm)
	}
	if none := ok(t, cs, "get_session", map[string]any{"session_id": id, "messages": 0}); len(none["messages"].([]any)) != 0 {
		t.Fatalf("get_session messages 0 returned messages: %v", none["messages"])
	}

	// A stale expected version is a tool error that carries the current version.
	stale := toolError(t, cs, "append_messages", map[string]any{"session_id": id, "expected_version": 1,
		"messages": []any{map[string]any{"role": "user", "content": "late"}}}, "version_conflict")
	if !strings.Contains(stale, `"current_version":2`) {
		t.Errorf("the conflict does not tell the current version: %s", stale)
	}

	// update_working_memory: a merge patch, twice with one request id → one revision.
	patch := map[string]any{"session_id": id, "request_id": "p1", "patch": map[string]any{"next_action": "draft section 1", "notes": []any{"outline done"}}}
	p1 := ok(t, cs, "update_working_memory", patch)
	p2 := ok(t, cs, "update_working_memory", patch)
	if p1["memory_version"] != p2["memory_version"] || p2["replayed"] != true {
		t.Fatalf("patch twice with one request id: %v then %v", p1, p2)
	}
	del := ok(t, cs, "update_working_memory", map[string]any{"session_id": id, "patch": map[string]any{"notes": nil}})
	wm := del["working_memory"].(map[string]any)
	if _, has := wm["notes"]; has || wm["next_action"] != "draft section 1" || wm["goal"] != "write the report" {
		t.Fatalf("after the merge patch: %v", wm)
	}

	// list_sessions names the session.
	page := ok(t, cs, "list_sessions", map[string]any{"status": "active", "limit": 10})
	if items := page["items"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != id {
		t.Fatalf("list_sessions: %v", page)
	}
	if page := ok(t, cs, "list_sessions", map[string]any{"status": "closed"}); len(page["items"].([]any)) != 0 {
		t.Fatalf("list_sessions closed: %v", page)
	}

	// Domain failures and bad arguments are tool errors, not protocol errors.
	toolError(t, cs, "get_session", map[string]any{"session_id": "sess_missing"}, "not_found")
	toolError(t, cs, "append_messages", map[string]any{"session_id": id, "messages": []any{map[string]any{"role": "user", "content": ""}}}, "invalid_request")
	for name, bad := range map[string]map[string]any{
		"unknown argument": {"session_id": id, "mesages": 3},
		"bad role":         {"session_id": id, "messages": []any{map[string]any{"role": "robot", "content": "x"}}},
		"wrong type":       {"session_id": 7},
	} {
		if msg := toolError(t, cs, "append_messages", bad, "invalid_request"); !strings.Contains(msg, "input schema") {
			t.Errorf("%s: %s", name, msg)
		}
	}
	if got := ok(t, cs, "get_session", map[string]any{"session_id": id}); got["message_count"] != float64(1) {
		t.Fatalf("a refused call stored something: %v", got)
	}
}

func TestLongTermTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	cs := e.connect(e.aliceKey)
	item := ok(t, cs, "remember", map[string]any{"key": "editor", "value": map[string]any{"name": "vim"}, "text": "prefers vim"})
	if item["namespace"] != "notes" || item["key"] != "editor" {
		t.Fatalf("remember without a namespace: %v", item)
	}
	ok(t, cs, "remember", map[string]any{"namespace": "prefs", "key": "shell", "value": "zsh"})
	found := ok(t, cs, "recall", map[string]any{"query": "vim"})
	items := found["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["key"] != "editor" {
		t.Fatalf("recall vim: %v", found)
	}
	if in := ok(t, cs, "recall", map[string]any{"query": "", "namespace": "prefs", "limit": 5}); len(in["items"].([]any)) != 1 {
		t.Fatalf("recall in prefs: %v", in)
	}
	toolError(t, cs, "remember", map[string]any{"namespace": "Bad NS", "key": "k", "value": 1}, "invalid_request")
	// Without a key the fact is added, and the same fact again consolidates into it.
	fact := ok(t, cs, "remember", map[string]any{"namespace": "facts", "text": "Works from Lisbon"})
	again := ok(t, cs, "remember", map[string]any{"namespace": "facts", "text": "works from  lisbon"})
	if fact["key"] == "" || again["consolidated_into"] != fact["key"] || again["version"] != float64(2) {
		t.Fatalf("remember without a key, twice: %v then %v", fact, again)
	}
	toolError(t, cs, "remember", map[string]any{"namespace": "facts"}, "invalid_request")
	toolError(t, cs, "remember", map[string]any{"key": "k"}, "invalid_request")
	toolError(t, cs, "recall", map[string]any{"query": "x", "mode": "vector"}, "invalid_request")
	gone := ok(t, cs, "forget", map[string]any{"namespace": "notes", "key": "editor"})
	if gone["forgotten"] != true {
		t.Fatalf("forget: %v", gone)
	}
	if after := ok(t, cs, "recall", map[string]any{"query": "vim"}); len(after["items"].([]any)) != 0 {
		t.Fatalf("recall after forget: %v", after)
	}
	toolError(t, cs, "forget", map[string]any{"namespace": "notes", "key": "editor"}, "not_found")
}

func TestStartRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	cs := e.connect(e.aliceKey)
	id := ok(t, cs, "create_session", map[string]any{"working_memory": map[string]any{"goal": "ship v2", "next_action": "tag the release"}})["id"]
	args := map[string]any{"session_id": id, "message": "continue", "request_id": "r1"}
	run := ok(t, cs, "start_run", args)
	runID, _ := run["run_id"].(string)
	if !strings.HasPrefix(runID, "run_") || run["done"] != true || run["status"] != "succeeded" || run["session_id"] != id {
		t.Fatalf("start_run: %v", run)
	}
	if reply, _ := run["reply"].(string); !strings.Contains(reply, "ship v2") {
		t.Fatalf("the reply does not continue the task: %v", run)
	}
	again := ok(t, cs, "start_run", args)
	if again["run_id"] != runID || again["replayed"] != true || again["reply"] != run["reply"] {
		t.Fatalf("start_run repeated with its request_id: %v", again)
	}
	if got := ok(t, cs, "get_session", map[string]any{"session_id": id}); got["message_count"] != float64(2) {
		t.Fatalf("one run, repeated, should leave its message and the reply: %v", got["message_count"])
	}
	toolError(t, cs, "start_run", map[string]any{"session_id": "sess_missing", "message": "x"}, "not_found")
}

// A run that outlasts start_run's wait comes back with its id and a request id; calling again
// with that request id waits for the same run, until it is done.
func TestStartRunBoundedWait(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{modelDelay: 300 * time.Millisecond, runWait: 20 * time.Millisecond})
	cs := e.connect(e.aliceKey)
	id := ok(t, cs, "create_session", map[string]any{"working_memory": map[string]any{"goal": "g"}})["id"]
	first := ok(t, cs, "start_run", map[string]any{"session_id": id, "message": "go"})
	reqID, _ := first["request_id"].(string)
	if first["done"] != false || reqID == "" || first["next"] == "" || !strings.HasPrefix(first["run_id"].(string), "run_") {
		t.Fatalf("a run longer than the wait: %v", first)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := ok(t, cs, "start_run", map[string]any{"session_id": id, "message": "go", "request_id": reqID})
		if r["run_id"] != first["run_id"] {
			t.Fatalf("polling started another run: %v", r)
		}
		if r["done"] == true {
			if r["status"] != "succeeded" || r["reply"] == "" {
				t.Fatalf("done: %v", r)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never ended: %v", r)
		}
	}
}

// On a server that requires versions, the writes to an existing session need expected_version,
// as on /v1; creating a session needs none.
func TestRequireVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{requireVersion: true})
	cs := e.connect(e.aliceKey)
	id := ok(t, cs, "create_session", map[string]any{"working_memory": map[string]any{"goal": "g"}})["id"]
	msgs := []any{map[string]any{"role": "user", "content": "hi"}}
	toolError(t, cs, "append_messages", map[string]any{"session_id": id, "messages": msgs}, "version_required")
	toolError(t, cs, "update_working_memory", map[string]any{"session_id": id, "patch": map[string]any{"goal": "h"}}, "version_required")
	toolError(t, cs, "start_run", map[string]any{"session_id": id, "message": "go"}, "version_required")
	if got := ok(t, cs, "get_session", map[string]any{"session_id": id}); got["version"] != float64(1) || got["message_count"] != float64(0) {
		t.Fatalf("a refused write changed the session: %v", got)
	}
	if r := ok(t, cs, "append_messages", map[string]any{"session_id": id, "messages": msgs, "expected_version": 1}); r["version"] != float64(2) {
		t.Fatalf("append with the version: %v", r)
	}
	if r := ok(t, cs, "start_run", map[string]any{"session_id": id, "message": "go", "expected_version": 2}); r["done"] != true {
		t.Fatalf("start_run with the version: %v", r)
	}
}

// A remembered value keeps its numbers exactly, beyond float64's 2^53.
func TestRememberKeepsNumbers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	cs := e.connect(e.aliceKey)
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "remember", Arguments: json.RawMessage(`{"key":"big","value":{"n":12345678901234567891}}`)})
	if err != nil || res.IsError {
		t.Fatalf("remember: %v %s", err, text(res))
	}
	if !strings.Contains(text(res), `"value":{"n":12345678901234567891}`) {
		t.Fatalf("the number changed: %s", text(res))
	}
}

// create_session with an external id creates the session once: a repeat (without a request id)
// answers the same session unchanged, as the HTTP route does.
func TestCreateSessionExternalID(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	cs := e.connect(e.aliceKey)
	ticket := ok(t, cs, "create_session", map[string]any{"title": "ticket 7", "external_id": "TICKET-7"})
	found := ok(t, cs, "create_session", map[string]any{"title": "other title", "external_id": "TICKET-7"})
	if id, _ := ticket["id"].(string); id == "" || found["id"] != id || found["title"] != "ticket 7" || found["external_id"] != "TICKET-7" {
		t.Fatalf("create_session with an external id: %v, then %v", ticket, found)
	}
}

// delete_message hides one message and moves the session to its next version; a repeat is
// not_found, a repeat with its request_id is answered from the first; the other message stays.
func TestDeleteMessageTool(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	cs := e.connect(e.aliceKey)
	id, _ := ok(t, cs, "create_session", map[string]any{"title": "oops"})["id"].(string)
	ok(t, cs, "append_messages", map[string]any{"session_id": id, "messages": []any{
		map[string]any{"role": "user", "content": "my password is hunter2"},
		map[string]any{"role": "user", "content": "please continue"}}})
	del := map[string]any{"session_id": id, "seq": 1, "expected_version": 2, "request_id": "d1"}
	first := ok(t, cs, "delete_message", del)
	again := ok(t, cs, "delete_message", del)
	if first["version"] != float64(3) || first["replayed"] != false || again["replayed"] != true || again["version"] != first["version"] {
		t.Fatalf("delete_message, then its repeat: %v, %v", first, again)
	}
	toolError(t, cs, "delete_message", map[string]any{"session_id": id, "seq": 1}, "not_found")
	got := ok(t, cs, "get_session", map[string]any{"session_id": id})
	msgs, _ := got["messages"].([]any)
	if len(msgs) != 1 || strings.Contains(toJSONString(got), "hunter2") || got["message_count"] != float64(1) {
		t.Fatalf("the session after the delete: %v", got)
	}
}

func toJSONString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// writeLog is a WriteCounter that keeps what it was told.
type writeLog struct {
	mu  sync.Mutex
	got []string
}

func (w *writeLog) Write(front string, replayed bool, code string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, fmt.Sprintf("%s replayed=%v code=%s", front, replayed, code))
}

// The tools' writes are counted as the API's are: a replay from a request id, a conflict by its
// code; reads are not counted.
func TestToolWritesCounted(t *testing.T) {
	t.Parallel()
	log := &writeLog{}
	e := newEnv(t, options{writes: log})
	cs := e.connect(e.aliceKey)
	id, _ := ok(t, cs, "create_session", map[string]any{"title": "counted"})["id"].(string)
	args := map[string]any{"session_id": id, "request_id": "a1", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	ok(t, cs, "append_messages", args)
	ok(t, cs, "append_messages", args)
	toolError(t, cs, "append_messages", map[string]any{"session_id": id, "expected_version": 1,
		"messages": []any{map[string]any{"role": "user", "content": "stale"}}}, "version_conflict")
	ok(t, cs, "get_session", map[string]any{"session_id": id})
	want := []string{"mcp replayed=false code=", "mcp replayed=false code=", "mcp replayed=true code=", "mcp replayed=false code=version_conflict"}
	log.mu.Lock()
	defer log.mu.Unlock()
	if !slices.Equal(log.got, want) {
		t.Fatalf("counted %q, want %q", log.got, want)
	}
}
