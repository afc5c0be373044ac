package main

import (
	"context"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/poll"
)

// scheduledRuns returns the request ids of a session's runs that a schedule's ticks started,
// and whether every run of the session has ended.
func scheduledRuns(t *testing.T, url, key, session string) ([]string, bool) {
	t.Helper()
	items := must(t, url, key, "GET", "/v1/sessions/"+session+"/runs?limit=100", nil, 200).json(t)["items"].([]any)
	var ids []string
	done := true
	for _, it := range items {
		r := it.(map[string]any)
		if id, _ := r["request_id"].(string); strings.HasPrefix(id, "schedule:") {
			ids = append(ids, id)
		}
		if s := r["status"].(string); s == "queued" || s == "running" {
			done = false
		}
	}
	return ids, done
}

// TestSchedulesCommands: the schedules commands against a real server process whose scheduler
// fires an every-second schedule on the real clock: each tick one run, pause stops it, bad
// input is refused with the reason.
func TestSchedulesCommands(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data, "--schedule-min-interval", "1s")
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
	session := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cron", "0 25 * * *"}, "invalid cron"},
		{[]string{"--cron", "0 8 * * *", "--timezone", "Atlantis/Capital"}, "unknown time zone"},
		{[]string{"--every", "500ms"}, "minimum interval"},
		{[]string{"--at", "2001-01-01T00:00:00Z"}, "in the past"},
	} {
		args := append([]string{"schedules", "create", "--session", session, "--message", "x"}, c.args...)
		if out, err := cli(args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%v: %v\n%s, want a refusal mentioning %q", c.args, err, out, c.want)
		}
	}
	out := ok("schedules", "create", "--session", session, "--every", "1s", "--message", "tick", "--overlap", "enqueue")
	id, _, _ := strings.Cut(out, " ")
	if !strings.HasPrefix(id, "sch_") || !strings.Contains(out, "active every 1s") {
		t.Fatalf("create: %s", out)
	}
	poll.Eventually(t, "three ticks' runs", func() bool {
		ids, _ := scheduledRuns(t, srv.url, key, session)
		return len(ids) >= 3
	})
	ids, _ := scheduledRuns(t, srv.url, key, session)
	seen := map[string]bool{}
	for _, r := range ids {
		if seen[r] {
			t.Fatalf("two runs for the tick %s", r)
		}
		seen[r] = true
	}
	if out := ok("schedules", "pause", id); !strings.Contains(out, "paused") || !strings.Contains(out, "next fire -") {
		t.Fatalf("pause: %s", out)
	}
	if out := ok("schedules", "ls", "--session", session); !strings.Contains(out, id) || !strings.Contains(out, "paused") {
		t.Fatalf("ls: %s", out)
	}
	if out := ok("schedules", "get", id); !strings.Contains(out, `"fired": `) || !strings.Contains(out, `"every": "1s"`) {
		t.Fatalf("get: %s", out)
	}
	if out := ok("schedules", "run", id); !strings.Contains(out, "on "+session) {
		t.Fatalf("run: %s", out)
	}
	ok("schedules", "resume", id)
	ok("schedules", "rm", id)
	if out, err := cli("schedules", "get", id); err == nil || !strings.Contains(err.Error(), "not_found") {
		t.Fatalf("get after rm: %v\n%s", err, out)
	}
}

// TestScheduleClusterSurvivesKill: three instances on one PostgreSQL database fire one
// every-second schedule on the real clock; one is SIGKILLed right after a tick and the others
// go on. Every tick has at most one run (its request id names the tick), and ticks keep coming.
func TestScheduleClusterSurvivesKill(t *testing.T) {
	t.Parallel()
	flags := []string{"--schedule-min-interval", "1s"}
	c := startCluster(t, 3, nil, flags, flags, flags)
	url := c.srvs[1].url
	session := must(t, url, c.key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	must(t, url, c.key, "POST", "/v1/sessions/"+session+"/schedules", map[string]any{"every": "1s", "message": "tick", "overlap": "enqueue"}, 201)
	poll.Eventually(t, "two ticks' runs", func() bool {
		ids, _ := scheduledRuns(t, url, c.key, session)
		return len(ids) >= 2
	})
	c.srvs[0].kill()
	before, _ := scheduledRuns(t, url, c.key, session)
	poll.Eventually(t, "four more ticks after the kill", func() bool {
		ids, _ := scheduledRuns(t, url, c.key, session)
		return len(ids) >= len(before)+4
	})
	ids, _ := scheduledRuns(t, c.srvs[2].url, c.key, session)
	seen := map[string]bool{}
	for _, r := range ids {
		if seen[r] {
			t.Fatalf("two runs for the tick %s: %v", r, ids)
		}
		seen[r] = true
	}
}
