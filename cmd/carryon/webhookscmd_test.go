package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/poll"
)

// TestWebhooksCommands: the webhooks commands against a real server process and a receiver that
// verifies with the Standard Webhooks library: create prints the secret once and get never
// does; a run's event arrives signed with it; the delivery log shows it delivered; redeliver
// sends it again with the same webhook-id; pause, resume, rotate (a new secret that signs the
// next delivery) and rm do what they say; bad input is refused with the reason and changes
// nothing.
func TestWebhooksCommands(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data, "--webhook-allow-http", "--webhook-allow-private", "--webhook-min-backoff", "50ms", "--webhook-max-backoff", "200ms")
	key := localKey(t, data)
	cli := func(args ...string) (string, error) {
		return cliRun(context.Background(), srv, nil, map[string]string{"CARRYON_KEY": key}, args...)
	}
	ok := func(args ...string) string {
		t.Helper()
		out, err := cli(args...)
		if err != nil {
			t.Fatalf("carryon %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	rc := newGoReceiver(t)
	received := func() []map[string]any {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		return append([]map[string]any(nil), rc.got...)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "--url", rc.URL}, "--events"},
		{[]string{"create", "--url", rc.URL, "--events", "run.exploded"}, "unknown event type"},
		{[]string{"create", "--url", rc.URL, "--events", "run.completed", "--session", "sess_nope"}, "not found"},
		{[]string{"get", "wh_nope"}, "not found"},
		{[]string{"redeliver", "wh_nope"}, "usage"},
	} {
		if out, err := cli(append([]string{"webhooks"}, c.args...)...); err == nil || !strings.Contains(err.Error()+out, c.want) {
			t.Fatalf("%v: %v\n%s, want a refusal mentioning %q", c.args, err, out, c.want)
		}
	}
	var empty struct{ Items []any }
	if err := json.Unmarshal([]byte(ok("webhooks", "ls", "--json")), &empty); err != nil || len(empty.Items) != 0 {
		t.Fatalf("after refusals, ls --json: %v %v", empty, err)
	}

	out := ok("webhooks", "create", "--url", rc.URL+"/hook", "--events", "run.completed, run.failed")
	id, _, _ := strings.Cut(out, " ")
	secret := ""
	for _, line := range strings.Split(out, "\n") {
		if s, found := strings.CutPrefix(line, "secret: "); found {
			secret = s
		}
	}
	if !strings.HasPrefix(id, "wh_") || !strings.HasPrefix(secret, "whsec_") || !strings.Contains(out, "active run.completed,run.failed on every session") {
		t.Fatalf("create: %s", out)
	}
	rc.mu.Lock()
	rc.secret = secret
	rc.mu.Unlock()
	if got := ok("webhooks", "get", id); strings.Contains(got, "whsec_") || !strings.Contains(got, `"id": "`+id+`"`) {
		t.Fatalf("get: %s", got)
	}
	if ls := ok("webhooks", "ls"); !strings.Contains(ls, id+"  active") || strings.Contains(ls, "whsec_") {
		t.Fatalf("ls: %s", ls)
	}

	run := must(t, srv.url, key, "POST", "/v1/chat", map[string]any{"message": "hello"}, http.StatusOK).json(t)["run_id"].(string)
	poll.Eventually(t, "the run's event delivered", func() bool { return len(received()) == 1 })
	first := received()[0]
	if first["run_id"] != run || first["type"] != "run.completed" {
		t.Fatalf("delivered %v, want run.completed of %s", first, run)
	}
	var log struct {
		Items []struct {
			ID, Status   string
			EventID      string `json:"event_id"`
			Attempts     int
			ResponseCode int `json:"response_code"`
		}
	}
	poll.Eventually(t, "the log says delivered", func() bool {
		json.Unmarshal([]byte(ok("webhooks", "deliveries", id, "--json")), &log)
		return len(log.Items) == 1 && log.Items[0].Status == "delivered"
	})
	if d := log.Items[0]; d.EventID != first["id"] || d.ResponseCode != 200 || d.Attempts != 1 {
		t.Fatalf("log %+v, delivered %v", d, first)
	}
	if text := ok("webhooks", "deliveries", id); !strings.Contains(text, log.Items[0].ID) || !strings.Contains(text, "delivered") {
		t.Fatalf("deliveries: %s", text)
	}
	if out := ok("webhooks", "redeliver", id, log.Items[0].ID); !strings.Contains(out, "queued again") {
		t.Fatalf("redeliver: %s", out)
	}
	poll.Eventually(t, "the redelivery", func() bool { return len(received()) == 2 })
	if again := received()[1]; again["id"] != first["id"] {
		t.Fatalf("redelivered with webhook-id %v, first %v", again["id"], first["id"])
	}

	if out := ok("webhooks", "pause", id); !strings.Contains(out, id+" paused") {
		t.Fatalf("pause: %s", out)
	}
	must(t, srv.url, key, "POST", "/v1/chat", map[string]any{"message": "while paused"}, http.StatusOK)
	var paused struct{ Paused bool }
	json.Unmarshal([]byte(ok("webhooks", "resume", id, "--json")), &paused)
	if paused.Paused {
		t.Fatal("resume --json says paused")
	}

	out = ok("webhooks", "rotate", id, "--previous-valid", "0s")
	newSecret := ""
	for _, line := range strings.Split(out, "\n") {
		if s, found := strings.CutPrefix(line, "secret: "); found {
			newSecret = s
		}
	}
	if !strings.HasPrefix(newSecret, "whsec_") || newSecret == secret || strings.Contains(out, "previous secret") {
		t.Fatalf("rotate: %s", out)
	}
	if out, err := cli("webhooks", "rotate", id, "--previous-valid", "1500ms"); err == nil || !strings.Contains(err.Error(), "whole seconds") {
		t.Fatalf("rotate 1500ms: %v %s", err, out)
	}
	rc.mu.Lock()
	rc.secret = newSecret
	rc.mu.Unlock()
	run = must(t, srv.url, key, "POST", "/v1/chat", map[string]any{"message": "after rotation"}, http.StatusOK).json(t)["run_id"].(string)
	poll.Eventually(t, "the event signed with the new secret", func() bool {
		got := received()
		return len(got) == 3 && got[2]["run_id"] == run
	})
	rc.mu.Lock()
	bad := rc.bad
	rc.mu.Unlock()
	if bad != 0 {
		t.Fatalf("%d deliveries failed verification", bad)
	}

	if out := ok("webhooks", "rm", id); out != "deleted "+id+"\n" {
		t.Fatalf("rm: %q", out)
	}
	if out, err := cli("webhooks", "get", id); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("get after rm: %v %s", err, out)
	}
	if strings.Contains(srv.logs.String(), secret[len("whsec_"):]) || strings.Contains(srv.logs.String(), newSecret[len("whsec_"):]) {
		t.Fatal("a secret is in the server's log")
	}
}
