package mcpserver_test

import (
	"strings"
	"testing"
)

// The webhook tools do what /v1/webhooks does for the caller: create shows the secret once
// (get and list never), update patches, rotate shows the new secret once, a run's end queues a
// delivery that list_webhook_deliveries shows and redeliver_webhook queues again, delete removes
// it; bad arguments are invalid_request and change nothing; on both stores.
func TestWebhookTools(t *testing.T) {
	t.Parallel()
	for name, opt := range stores(t, options{}) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testWebhookTools(t, newEnv(t, opt))
		})
	}
}

func testWebhookTools(t *testing.T, e *env) {
	cs := e.connect(e.aliceKey)
	sid := ok(t, cs, "create_session", map[string]any{"title": "hooked"})["id"].(string)
	created := ok(t, cs, "create_webhook", map[string]any{"url": "http://127.0.0.1:9/hook", "events": []any{"run.completed", "run.failed"}, "session_id": sid})
	id, _ := created["id"].(string)
	secret, _ := created["secret"].(string)
	if !strings.HasPrefix(id, "wh_") || !strings.HasPrefix(secret, "whsec_") || created["session_id"] != sid || created["paused"] != false ||
		mustJSON(t, created["events"]) != `["run.completed","run.failed"]` {
		t.Fatalf("create_webhook: %v", created)
	}
	got := ok(t, cs, "get_webhook", map[string]any{"webhook_id": id})
	list := ok(t, cs, "list_webhooks", nil)
	for what, s := range map[string]string{"get_webhook": mustJSON(t, got), "list_webhooks": mustJSON(t, list)} {
		if strings.Contains(s, "whsec_") || strings.Contains(s, `"secret"`) || !strings.Contains(s, id) {
			t.Errorf("%s shows the secret, or not the webhook: %s", what, s)
		}
	}
	if items := list["items"].([]any); len(items) != 1 {
		t.Fatalf("list_webhooks: %v", list)
	}

	// Bad arguments: a tool error that says what, and nothing changes.
	for _, c := range []struct {
		tool string
		args map[string]any
		msg  string
	}{
		{"create_webhook", map[string]any{"url": "http://127.0.0.1:9/hook", "events": []any{"run.exploded"}}, "events"},
		{"create_webhook", map[string]any{"url": "http://127.0.0.1:9/hook", "events": []any{}}, "events"},
		{"create_webhook", map[string]any{"url": "http://127.0.0.1:9/hook", "events": []any{"run.failed", "run.failed"}}, "run.failed is listed twice"},
		{"create_webhook", map[string]any{"url": "ftp://127.0.0.1/hook", "events": []any{"run.failed"}}, "ftp"},
		{"create_webhook", map[string]any{"url": "http://127.0.0.1:9/hook", "event": []any{"run.failed"}}, "event"},
		{"create_webhook", map[string]any{"url": "http://127.0.0.1:9/hook", "events": []any{"run.failed"}, "request_id": "k"}, "request_id"},
		{"update_webhook", map[string]any{"webhook_id": id, "url": "ftp://127.0.0.1/hook"}, "ftp"},
		{"update_webhook", map[string]any{"webhook_id": id, "events": []any{"run.exploded"}}, "events"},
		{"update_webhook", map[string]any{"webhook_id": id, "paused": "yes"}, "paused"},
		{"rotate_webhook_secret", map[string]any{"webhook_id": id, "previous_valid_seconds": -1}, "previous_valid_seconds"},
		{"rotate_webhook_secret", map[string]any{"webhook_id": id, "previous_valid_seconds": 604801}, "previous_valid_seconds"},
		{"list_webhook_deliveries", map[string]any{"webhook_id": id, "limit": 101}, "limit"},
		{"list_webhook_deliveries", map[string]any{"webhook_id": id, "cursor": "whd_nope"}, "whd_nope"},
		{"delete_webhook", map[string]any{"webhook_id": id, "request_id": "k"}, "request_id"},
	} {
		if msg := toolError(t, cs, c.tool, c.args, "invalid_request"); !strings.Contains(msg, c.msg) {
			t.Errorf("%s(%v): %s does not name %q", c.tool, c.args, msg, c.msg)
		}
	}
	if now := ok(t, cs, "get_webhook", map[string]any{"webhook_id": id}); mustJSON(t, now) != mustJSON(t, got) {
		t.Fatalf("a refused call changed the webhook:\n%v\nwas\n%v", now, got)
	}
	if n := len(ok(t, cs, "list_webhooks", nil)["items"].([]any)); n != 1 {
		t.Fatalf("a refused create_webhook made one: %d webhooks", n)
	}
	for _, tool := range []string{"get_webhook", "update_webhook", "delete_webhook", "rotate_webhook_secret", "list_webhook_deliveries"} {
		toolError(t, cs, tool, map[string]any{"webhook_id": "wh_missing"}, "not_found")
	}
	toolError(t, cs, "create_webhook", map[string]any{"url": "http://127.0.0.1:9/hook", "events": []any{"run.failed"}, "session_id": "sess_missing"}, "not_found")

	// update_webhook patches: what is given replaces, the rest stays.
	up := ok(t, cs, "update_webhook", map[string]any{"webhook_id": id, "paused": true, "events": []any{"run.completed"}})
	if up["paused"] != true || mustJSON(t, up["events"]) != `["run.completed"]` || up["url"] != "http://127.0.0.1:9/hook" || up["session_id"] != sid {
		t.Fatalf("update_webhook: %v", up)
	}
	up = ok(t, cs, "update_webhook", map[string]any{"webhook_id": id, "paused": false, "url": "http://127.0.0.1:9/other"})
	if up["paused"] != false || mustJSON(t, up["events"]) != `["run.completed"]` || up["url"] != "http://127.0.0.1:9/other" {
		t.Fatalf("update_webhook resumed: %v", up)
	}

	// rotate_webhook_secret shows a new secret once; the previous one signs for a while.
	rot := ok(t, cs, "rotate_webhook_secret", map[string]any{"webhook_id": id})
	if s, _ := rot["secret"].(string); !strings.HasPrefix(s, "whsec_") || s == secret || rot["previous_secret_expires_at"] == nil {
		t.Fatalf("rotate_webhook_secret: %v (the first secret %s)", rot, secret)
	}
	if rot = ok(t, cs, "rotate_webhook_secret", map[string]any{"webhook_id": id, "previous_valid_seconds": 0}); rot["previous_secret_expires_at"] != nil {
		t.Fatalf("rotate_webhook_secret with previous_valid_seconds 0 kept the previous secret: %v", rot)
	}
	if s := mustJSON(t, ok(t, cs, "get_webhook", map[string]any{"webhook_id": id})); strings.Contains(s, "whsec_") {
		t.Fatalf("get_webhook after a rotation shows a secret: %s", s)
	}

	// A run on the session ends: its run.completed is queued for the webhook.
	run := ok(t, cs, "start_run", map[string]any{"session_id": sid, "message": "hello"})
	if run["done"] != true {
		t.Fatalf("start_run: %v", run)
	}
	page := ok(t, cs, "list_webhook_deliveries", map[string]any{"webhook_id": id, "limit": 10})
	items := page["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("list_webhook_deliveries: %v", page)
	}
	d := items[0].(map[string]any)
	if d["event_type"] != "run.completed" || d["status"] != "pending" || d["webhook_id"] != id ||
		d["payload"].(map[string]any)["data"].(map[string]any)["run_id"] != run["run_id"] {
		t.Fatalf("the delivery: %v", d)
	}
	did := d["id"].(string)
	again := ok(t, cs, "redeliver_webhook", map[string]any{"webhook_id": id, "delivery_id": did})
	if again["id"] != did || again["event_id"] != d["event_id"] || again["status"] != "pending" || again["next_attempt_at"] == nil {
		t.Fatalf("redeliver_webhook: %v", again)
	}
	toolError(t, cs, "redeliver_webhook", map[string]any{"webhook_id": id, "delivery_id": "whd_missing"}, "not_found")

	// delete_webhook removes it and its log; a repeat is not_found.
	if del := ok(t, cs, "delete_webhook", map[string]any{"webhook_id": id}); del["id"] != id || del["deleted"] != true {
		t.Fatalf("delete_webhook: %v", del)
	}
	toolError(t, cs, "delete_webhook", map[string]any{"webhook_id": id}, "not_found")
	toolError(t, cs, "list_webhook_deliveries", map[string]any{"webhook_id": id}, "not_found")
	if l := ok(t, cs, "list_webhooks", nil); len(l["items"].([]any)) != 0 {
		t.Fatalf("list_webhooks after delete_webhook: %v", l)
	}
}

// Another user's key reaches none of alice's webhooks: every webhook tool is not_found (as a
// missing one) and shows nothing of it, bob's list is empty, bob cannot subscribe to alice's
// session, and alice's webhook and its log are as they were.
func TestWebhookToolsOfAnotherUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	alice, bob := e.connect(e.aliceKey), e.connect(e.bobKey)
	sid := ok(t, alice, "create_session", map[string]any{"title": "alice's"})["id"].(string)
	id := ok(t, alice, "create_webhook", map[string]any{"url": "http://127.0.0.1:9/alice-secret-hook", "events": []any{"run.completed"}})["id"].(string)
	ok(t, alice, "start_run", map[string]any{"session_id": sid, "message": "hello"})
	log := ok(t, alice, "list_webhook_deliveries", map[string]any{"webhook_id": id})
	did := log["items"].([]any)[0].(map[string]any)["id"].(string)
	before := mustJSON(t, ok(t, alice, "get_webhook", map[string]any{"webhook_id": id})) + mustJSON(t, log)

	for tool, args := range map[string]map[string]any{
		"get_webhook":             {"webhook_id": id},
		"update_webhook":          {"webhook_id": id, "paused": true, "url": "http://127.0.0.1:9/bob"},
		"rotate_webhook_secret":   {"webhook_id": id},
		"list_webhook_deliveries": {"webhook_id": id},
		"redeliver_webhook":       {"webhook_id": id, "delivery_id": did},
		"delete_webhook":          {"webhook_id": id},
		"create_webhook":          {"url": "http://127.0.0.1:9/bob", "events": []any{"run.completed"}, "session_id": sid},
	} {
		if msg := toolError(t, bob, tool, args, "not_found"); strings.Contains(msg, "alice-secret-hook") {
			t.Errorf("bob's %s shows alice's webhook: %s", tool, msg)
		}
	}
	if l := ok(t, bob, "list_webhooks", nil); len(l["items"].([]any)) != 0 {
		t.Fatalf("bob's list_webhooks: %v", l)
	}
	after := mustJSON(t, ok(t, alice, "get_webhook", map[string]any{"webhook_id": id})) + mustJSON(t, ok(t, alice, "list_webhook_deliveries", map[string]any{"webhook_id": id}))
	if after != before {
		t.Fatalf("bob's calls changed alice's webhook:\n%s\nwas\n%s", after, before)
	}
}
