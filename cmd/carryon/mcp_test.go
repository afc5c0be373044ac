package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/carryon-hub/carryon/internal/poll"
)

// mcpProcess connects the go-sdk client to a `carryon mcp` process started with args.
func mcpProcess(t *testing.T, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"mcp"}, args...)...)
	c := mcp.NewClient(&mcp.Implementation{Name: "carryon-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to carryon mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// mcpTool calls a tool and returns its structured content and whether it is a tool error.
func mcpTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		t.Fatalf("%s: structured content %s", name, b)
	}
	return m, res.IsError
}

// mustJSONString is v as JSON.
func mustJSONString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mcpOK calls a tool that must succeed.
func mcpOK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	m, isErr := mcpTool(t, cs, name, args)
	if isErr {
		t.Fatalf("%s: tool error %v", name, m)
	}
	return m
}

// mcpErrorCode calls a tool that must fail and returns its carryon error code.
func mcpErrorCode(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	m, isErr := mcpTool(t, cs, name, args)
	if !isErr {
		t.Fatalf("%s: want a tool error, got %v", name, m)
	}
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// mcpTools are the tools of `carryon serve`'s MCP server (and of `carryon mcp`), sorted.
var mcpTools = []string{"append_messages", "compact_session", "create_schedule", "create_session", "create_webhook", "delete_message",
	"delete_schedule", "delete_webhook", "forget", "get_session", "get_webhook", "learn_facts", "list_schedules", "list_sessions", "list_webhook_deliveries",
	"list_webhooks", "pause_schedule", "recall", "redeliver_webhook", "remember", "resume_schedule", "rotate_webhook_secret", "run_schedule",
	"start_run", "update_webhook", "update_working_memory"}

// TestMCPStdio drives `carryon mcp`, a real process, with the go-sdk client, against a real
// `carryon serve`: for the local key file's user, and for another user's --key.
func TestMCPStdio(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data, "--webhook-allow-http", "--webhook-allow-private")
	bob := addUser(t, data, "bob")
	alice := mcpProcess(t, "--server", srv.url, "--data", data)
	other := mcpProcess(t, "--server", srv.url, "--key", bob)

	tools, err := alice.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, mcpTools) {
		t.Fatalf("tools %v, want %v", names, mcpTools)
	}

	id := mcpOK(t, alice, "create_session", map[string]any{"title": "trip", "working_memory": map[string]any{"goal": "plan the trip", "next_action": "book the train"}})["id"].(string)
	args := map[string]any{"session_id": id, "request_id": "once", "messages": []any{map[string]any{"role": "user", "content": "book it"}}}
	first := mcpOK(t, alice, "append_messages", args)
	second := mcpOK(t, alice, "append_messages", args)
	if first["replayed"] != false || second["replayed"] != true || first["version"] != second["version"] {
		t.Fatalf("append twice with one request id: %v then %v", first, second)
	}
	// The server holds one message: read it over /v1, not through the MCP server.
	view := must(t, srv.url, localKey(t, data), "GET", "/v1/sessions/"+id, nil, 200).json(t)
	if view["message_count"] != float64(1) {
		t.Fatalf("the server has %v messages after two appends with one request id", view["message_count"])
	}
	// The webhook tools go through the Go client's webhook calls to the server.
	hook := mcpOK(t, alice, "create_webhook", map[string]any{"url": "http://127.0.0.1:9/hook", "events": []any{"run.completed"}, "session_id": id})
	hookID, _ := hook["id"].(string)
	if secret, _ := hook["secret"].(string); !strings.HasPrefix(hookID, "wh_") || !strings.HasPrefix(secret, "whsec_") || hook["session_id"] != id {
		t.Fatalf("create_webhook: %v", hook)
	}
	if code := mcpErrorCode(t, alice, "create_webhook", map[string]any{"url": "http://127.0.0.1:9/hook", "events": []any{"run.completed", "run.completed"}}); code != "invalid_request" {
		t.Fatalf("create_webhook with an event twice: %s", code)
	}
	if l := mcpOK(t, alice, "list_webhooks", nil); len(l["items"].([]any)) != 1 || strings.Contains(mustJSONString(t, l), "whsec_") {
		t.Fatalf("list_webhooks: %v", l)
	}
	if code := mcpErrorCode(t, other, "get_webhook", map[string]any{"webhook_id": hookID}); code != "not_found" {
		t.Fatalf("bob's get_webhook of alice's webhook: %s", code)
	}

	run := mcpOK(t, alice, "start_run", map[string]any{"session_id": id, "message": "continue"})
	if run["done"] != true || !strings.Contains(run["reply"].(string), "plan the trip") {
		t.Fatalf("start_run: %v", run)
	}

	log := mcpOK(t, alice, "list_webhook_deliveries", map[string]any{"webhook_id": hookID, "limit": 5})["items"].([]any)
	if len(log) != 1 || log[0].(map[string]any)["event_type"] != "run.completed" {
		t.Fatalf("list_webhook_deliveries: %v", log)
	}
	if d := mcpOK(t, alice, "redeliver_webhook", map[string]any{"webhook_id": hookID, "delivery_id": log[0].(map[string]any)["id"]}); d["status"] != "pending" {
		t.Fatalf("redeliver_webhook: %v", d)
	}
	if u := mcpOK(t, alice, "update_webhook", map[string]any{"webhook_id": hookID, "paused": true}); u["paused"] != true || u["url"] != "http://127.0.0.1:9/hook" {
		t.Fatalf("update_webhook: %v", u)
	}
	if r := mcpOK(t, alice, "rotate_webhook_secret", map[string]any{"webhook_id": hookID, "previous_valid_seconds": 60}); r["secret"] == hook["secret"] || r["previous_secret_expires_at"] == nil {
		t.Fatalf("rotate_webhook_secret: %v", r)
	}
	if d := mcpOK(t, alice, "delete_webhook", map[string]any{"webhook_id": hookID}); d["deleted"] != true {
		t.Fatalf("delete_webhook: %v", d)
	}
	if code := mcpErrorCode(t, alice, "get_webhook", map[string]any{"webhook_id": hookID}); code != "not_found" {
		t.Fatalf("get_webhook after delete_webhook: %s", code)
	}

	res, err := alice.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "carryon://sessions/" + id + "/memory"})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "book the train") || res.CacheScope != "private" {
		t.Fatalf("resources/read: %v %v", res, err)
	}
	prompt, err := alice.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "continue_task", Arguments: map[string]string{"session_id": id}})
	if err != nil || !strings.Contains(prompt.Messages[0].Content.(*mcp.TextContent).Text, "Next action: book the train") {
		t.Fatalf("prompts/get: %v %v", prompt, err)
	}

	sched := mcpOK(t, alice, "create_schedule", map[string]any{"session_id": id, "cron": "0 8 * * 1-5", "timezone": "Europe/Paris", "message": "check the trains"})
	if sched["status"] != "active" || sched["next_fire_at"] == nil {
		t.Fatalf("create_schedule: %v", sched)
	}
	if code := mcpErrorCode(t, alice, "create_schedule", map[string]any{"session_id": id, "cron": "0 25 * * *", "message": "x"}); code != "invalid_request" {
		t.Fatalf("create_schedule with a bad cron: %s", code)
	}
	if l := mcpOK(t, alice, "list_schedules", map[string]any{"session_id": id}); len(l["items"].([]any)) != 1 {
		t.Fatalf("list_schedules: %v", l)
	}

	if l := mcpOK(t, other, "list_schedules", map[string]any{}); len(l["items"].([]any)) != 0 {
		t.Fatalf("bob's list_schedules: %v", l)
	}
	schedID := sched["id"].(string)
	for _, name := range []string{"pause_schedule", "resume_schedule", "run_schedule", "delete_schedule"} {
		if code := mcpErrorCode(t, other, name, map[string]any{"schedule_id": schedID}); code != "not_found" {
			t.Fatalf("bob's %s of alice's schedule: %s", name, code)
		}
	}
	pause := map[string]any{"schedule_id": schedID, "request_id": "pause-once"}
	if p := mcpOK(t, alice, "pause_schedule", pause); p["status"] != "paused" || p["replayed"] != false {
		t.Fatalf("pause_schedule: %v", p)
	}
	if p := mcpOK(t, alice, "pause_schedule", pause); p["status"] != "paused" || p["replayed"] != true {
		t.Fatalf("pause_schedule repeated: %v", p)
	}
	if p := mcpOK(t, alice, "resume_schedule", map[string]any{"schedule_id": schedID}); p["status"] != "active" || p["next_fire_at"] == nil {
		t.Fatalf("resume_schedule: %v", p)
	}
	sr := mcpOK(t, alice, "run_schedule", map[string]any{"schedule_id": schedID, "request_id": "run-once"})
	if sr["session_id"] != id || sr["schedule_id"] != schedID || sr["message"] != "check the trains" || !strings.HasPrefix(sr["run_id"].(string), "run_") || sr["replayed"] != false {
		t.Fatalf("run_schedule: %v", sr)
	}
	if again := mcpOK(t, alice, "run_schedule", map[string]any{"schedule_id": schedID, "request_id": "run-once"}); again["run_id"] != sr["run_id"] || again["replayed"] != true {
		t.Fatalf("run_schedule repeated: %v, first %v", again, sr)
	}
	poll.Eventually(t, "the schedule's run to end", func() bool {
		r := must(t, srv.url, localKey(t, data), "GET", "/v1/runs/"+sr["run_id"].(string), nil, 200).json(t)
		return r["status"] == "succeeded"
	})
	if d := mcpOK(t, alice, "delete_schedule", map[string]any{"schedule_id": schedID}); d["deleted"] != true || d["id"] != schedID {
		t.Fatalf("delete_schedule: %v", d)
	}
	if l := mcpOK(t, alice, "list_schedules", map[string]any{"session_id": id}); len(l["items"].([]any)) != 0 {
		t.Fatalf("list_schedules after delete_schedule: %v", l)
	}
	for _, name := range []string{"delete_schedule", "pause_schedule", "run_schedule"} {
		if code := mcpErrorCode(t, alice, name, map[string]any{"schedule_id": schedID}); code != "not_found" {
			t.Fatalf("%s of a deleted schedule: %s", name, code)
		}
	}
	if code := mcpErrorCode(t, other, "create_schedule", map[string]any{"session_id": id, "every": "1h", "message": "x"}); code != "not_found" {
		t.Fatalf("bob's create_schedule on alice's session: %s", code)
	}
	if code := mcpErrorCode(t, other, "get_session", map[string]any{"session_id": id}); code != "not_found" {
		t.Fatalf("bob's get_session of alice's session: %s", code)
	}
	if code := mcpErrorCode(t, other, "append_messages", args); code != "not_found" {
		t.Fatalf("bob's append to alice's session: %s", code)
	}
	if page := mcpOK(t, other, "list_sessions", nil); len(page["items"].([]any)) != 0 {
		t.Fatalf("bob lists %v", page)
	}
	if _, err := other.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "carryon://sessions/" + id}); err == nil || strings.Contains(err.Error(), "plan the trip") {
		t.Fatalf("bob reads alice's session: %v", err)
	}
}

// TestMCPCommandLine: the help needs no key and no server; without a key the command says how
// to give one; a server that cannot be reached is a tool error that says so.
func TestMCPCommandLine(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	out, _, code := runBinary(t, []string{"CARRYON_KEY=", "CARRYON_DATA=" + empty}, "mcp", "--help")
	if code != 0 || !strings.Contains(out.String(), "usage: carryon mcp") || !strings.Contains(out.String(), "Examples:") || !strings.Contains(out.String(), "--run-wait") {
		t.Fatalf("carryon mcp --help: exit %d\n%s", code, out)
	}
	_, errOut, code := runBinary(t, []string{"CARRYON_KEY=", "CARRYON_DATA=" + empty}, "mcp")
	if code != 1 || !strings.Contains(errOut.String(), "no API key") {
		t.Fatalf("carryon mcp without a key: exit %d: %s", code, errOut)
	}
	if _, _, code := runBinary(t, nil, "mcp", "--key", "ck_x", "--run-wait", "0s"); code != 2 {
		t.Fatalf("--run-wait 0s: exit %d, want 2", code)
	}
	// Nothing listens on port 1.
	cs := mcpProcess(t, "--server", "http://127.0.0.1:1", "--key", "ck_x")
	m, isErr := mcpTool(t, cs, "list_sessions", nil)
	e, _ := m["error"].(map[string]any)
	if !isErr || e["code"] != "unavailable" || !strings.Contains(e["message"].(string), "127.0.0.1:1") {
		t.Fatalf("a server that cannot be reached: %v", m)
	}
}
