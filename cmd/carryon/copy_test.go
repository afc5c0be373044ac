package main

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestCopySQLiteToPostgres makes a deployment on SQLite through a real server, copies it to a
// new PostgreSQL database, starts a server on that, and reads everything back identically: the
// sessions with their messages and memory history, the fork, the runs with their tool journals
// and events; the old keys authenticate and request ids still replay. A second copy into the
// now non-empty database is refused.
func TestCopySQLiteToPostgres(t *testing.T) {
	t.Parallel()
	dsn := pgDatabase(t)
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	bob := addUser(t, data, "bob")

	id := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "moving day", "metadata": map[string]any{"team": "ops"},
		"working_memory": map[string]any{"goal": "move to Postgres", "next_action": "copy"}}, 201).json(t)["id"].(string)
	msgs := "/v1/sessions/" + id + "/messages"
	first := must(t, srv.url, key, "POST", msgs, appendBody("first"), 201, "Idempotency-Key: m-1")
	must(t, srv.url, key, "POST", msgs, map[string]any{"messages": []map[string]any{
		{"role": "user", "content": "ünïcode ✓ and \"quotes\""}, {"role": "assistant", "content": "noted", "metadata": map[string]any{"n": 1}}}}, 201)
	for i, step := range []string{"check counts", "start servers"} {
		must(t, srv.url, key, "PATCH", "/v1/sessions/"+id+"/memory", map[string]any{"patch": map[string]any{"next_action": step, "notes": []any{i}}}, 200)
	}
	fork := must(t, srv.url, key, "POST", "/v1/sessions/"+id+"/fork", map[string]any{"at_version": 2, "title": "the fork"}, 201).json(t)["id"].(string)
	must(t, srv.url, key, "POST", "/v1/sessions/"+fork+"/messages", appendBody("only in the fork"), 201)
	chat := must(t, srv.url, key, "POST", "/v1/chat", map[string]any{"message": "Plan the move: copy the data, then switch the servers"}, 200, "Idempotency-Key: chat-1")
	chatID := chat.json(t)["session_id"].(string)
	runID := chat.json(t)["run_id"].(string)
	bobSess := must(t, srv.url, bob, "POST", "/v1/sessions", map[string]any{"title": "bob's"}, 201).json(t)["id"].(string)
	must(t, srv.url, key, "PUT", "/v1/memories/prefs/tea", map[string]any{"value": map[string]any{"kind": "sencha"}, "text": "prefers green tea at 80 degrees"}, 200)
	must(t, srv.url, key, "PUT", "/v1/memories/projects.alpha/owner", map[string]any{"value": map[string]any{"name": "Dana Quill"}}, 200)
	must(t, srv.url, bob, "PUT", "/v1/memories/prefs/coffee", map[string]any{"value": "espresso, no sugar"}, 200)

	reads := []struct{ key, path string }{
		{key, "/v1/sessions/" + id + "?messages=100"},
		{key, msgs},
		{key, "/v1/sessions/" + id + "/memory"},
		{key, "/v1/sessions/" + id + "/memory/history"},
		{key, "/v1/sessions/" + fork + "?messages=100"},
		{key, "/v1/sessions/" + fork + "/messages"},
		{key, "/v1/sessions/" + chatID + "?messages=100"},
		{key, "/v1/sessions/" + chatID + "/memory/history"},
		{key, "/v1/sessions/" + chatID + "/runs"},
		{key, "/v1/runs/" + runID},
		{key, "/v1/runs/" + runID + "/actions"},
		{key, "/v1/sessions?limit=50"},
		// Sessions found by their messages' words: the destination's search index is rebuilt from
		// the copied messages (the fork by the text it shows, bob's never for alice).
		{key, "/v1/sessions?q=" + url.QueryEscape("ünïcode quotes")},
		{key, "/v1/sessions?q=first"},
		{key, "/v1/sessions?q=only"},
		{bob, "/v1/sessions?q=first"},
		{key, "/v1/users"},
		{bob, "/v1/sessions/" + bobSess},
		{bob, "/v1/me"},
		{key, "/v1/memories"},
		{key, "/v1/memories/prefs/tea"},
		{bob, "/v1/memories"},
	}
	before := make([]string, len(reads))
	for i, r := range reads {
		before[i] = string(must(t, srv.url, r.key, "GET", r.path, nil, 200).body)
	}
	events, done := readEvents(t, srv.url+"/v1/runs/"+runID+"/events", key, "", nil)
	if !done || len(events) < 3 {
		t.Fatalf("run events before the copy: %v", events)
	}
	srv.kill()

	var stdout, stderr bytes.Buffer
	args := []string{"copy", "--from", "sqlite://" + filepath.Join(data, "carryon.db"), "--to", dsn, "--progress", "lines"}
	if err := run(context.Background(), args, envMap(nil), nil, &stdout, &stderr); err != nil {
		t.Fatalf("copy: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	checkCountsTable(t, stdout.String(), map[string]string{"users": "2", "sessions": "4", "runs": "1", "memories": "3"})
	if strings.Contains(stderr.String(), "warning") {
		t.Errorf("warnings from the copy:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "messages") || !strings.Contains(stderr.String(), "/") {
		t.Fatalf("no progress on stderr:\n%s", stderr.String())
	}

	pg := startServer(t, data, "--db", dsn)
	for i, r := range reads {
		if got := string(must(t, pg.url, r.key, "GET", r.path, nil, 200).body); got != before[i] {
			t.Errorf("GET %s after the copy:\n got %s\nwant %s", r.path, got, before[i])
		}
	}
	after, _ := readEvents(t, pg.url+"/v1/runs/"+runID+"/events", key, "", nil)
	if !reflect.DeepEqual(after, events) {
		t.Errorf("run events after the copy: %v, before %v", after, events)
	}
	again := must(t, pg.url, key, "POST", msgs, appendBody("first"), 201, "Idempotency-Key: m-1")
	if !bytes.Equal(again.body, first.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("request id m-1 after the copy: %s (replayed %q), first answer %s", again.body, again.header.Get("Idempotent-Replayed"), first.body)
	}
	chat2 := must(t, pg.url, key, "POST", "/v1/chat", map[string]any{"message": "Plan the move: copy the data, then switch the servers"}, 200, "Idempotency-Key: chat-1").json(t)
	if chat2["session_id"] != chatID || chat2["run_id"] != runID {
		t.Errorf("request id chat-1 after the copy started something new: %v", chat2)
	}
	// The moved deployment keeps working: a new run on the moved session, from the next seq on.
	next := must(t, pg.url, key, "POST", "/v1/chat", map[string]any{"session_id": chatID, "message": "continue the task"}, 200).json(t)
	if next["status"] != "succeeded" {
		t.Errorf("a run after the copy: %v", next)
	}
	must(t, pg.url, "ck_not_a_key", "GET", "/v1/me", nil, 401)
	// Long-term memory is still found by its words: the search text moved from SQLite's full-text
	// index into the table PostgreSQL indexes.
	for _, q := range []struct{ key, query, want string }{{key, "green tea", "tea"}, {key, "quill", "owner"}, {bob, "espresso", "coffee"}, {key, "espresso", ""}} {
		items := must(t, pg.url, q.key, "POST", "/v1/memories/search", map[string]any{"query": q.query}, 200).json(t)["items"].([]any)
		if q.want == "" && len(items) != 0 || q.want != "" && (len(items) != 1 || items[0].(map[string]any)["key"] != q.want) {
			t.Errorf("search %q after the copy: %v", q.query, items)
		}
	}

	stdout.Reset()
	err := run(context.Background(), args, envMap(nil), nil, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("second copy into the same database: %v", err)
	}
}

// checkCountsTable checks that out holds the table of counts with a matching line per table and
// the given counts.
func checkCountsTable(t *testing.T, out string, want map[string]string) {
	t.Helper()
	if !regexp.MustCompile(`(?m)^TABLE\s+SQLITE\s+POSTGRES`).MatchString(out) {
		t.Fatalf("no counts table in:\n%s", out)
	}
	for _, table := range []string{"users", "api_keys", "sessions", "messages", "working_memory", "memory_revisions", "idempotency", "runs", "actions", "run_events", "memories"} {
		m := regexp.MustCompile(`(?m)^` + table + `\s+([\d,]+)\s+([\d,]+)\s+ok\s*$`).FindStringSubmatch(out)
		if m == nil || m[1] != m[2] {
			t.Fatalf("no matching line for %s in:\n%s", table, out)
		}
		if w, ok := want[table]; ok && m[1] != w {
			t.Fatalf("%s: %s rows, want %s", table, m[1], w)
		}
	}
	if !strings.Contains(out, "every count matches") {
		t.Fatalf("no verdict in:\n%s", out)
	}
}

// TestCopyCountsAndOrder copies a deployment made without a server (users and keys only) and
// prints the counts table; tables come out in foreign-key order.
func TestCopyCountsAndOrder(t *testing.T) {
	t.Parallel()
	dsn := pgDatabase(t)
	data := t.TempDir()
	addUser(t, data, "carol")
	addUser(t, data, "dave")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"copy", "--data", data, "--to", dsn, "--progress", "bar"}, envMap(nil), nil, &stdout, &stderr)
	if err != nil {
		t.Fatalf("copy: %v\n%s", err, stderr.String())
	}
	checkCountsTable(t, stdout.String(), map[string]string{"users": "2", "api_keys": "2", "sessions": "0"})
	out := stdout.String()
	if !(strings.Index(out, "\nusers") < strings.Index(out, "\napi_keys") && strings.Index(out, "\nsessions") < strings.Index(out, "\nmessages") &&
		strings.Index(out, "\nruns") < strings.Index(out, "\nrun_events")) {
		t.Fatalf("tables not in foreign-key order:\n%s", out)
	}
	if !strings.Contains(stderr.String(), "\rusers") || !strings.Contains(stderr.String(), "[##############################] 2/2") {
		t.Fatalf("no progress bar on stderr: %q", stderr.String())
	}
}

// TestCopyRefusesBadSources: a missing SQLite file is an error that names it (and is not
// created); a source or destination of the wrong kind is a usage error.
func TestCopyRefusesBadSources(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "nope", "carryon.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--from", missing, "--to", "postgres://postgres@127.0.0.1:1/x"}, missing},
		{[]string{"--from", "sqlite://" + missing, "--to", "postgres://postgres@127.0.0.1:1/x"}, "no such file"},
		{[]string{"--from", missing}, "usage"},
		{[]string{"--from", missing, "--to", "/tmp/other.db"}, "postgres://"},
		{[]string{"--from", "postgres://h/db", "--to", "postgres://h/db2"}, "SQLite file"},
		{[]string{"--from", missing, "--to", "postgres://h/db", "--progress", "fancy"}, "--progress"},
	} {
		var out bytes.Buffer
		err := run(context.Background(), append([]string{"copy"}, tc.args...), envMap(nil), nil, &out, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("copy %v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("copy created the missing source")
	}
}

// TestCommas: groups of three digits.
func TestCommas(t *testing.T) {
	t.Parallel()
	if commas(6000) != "6,000" || commas(4200000) != "4,200,000" || commas(999) != "999" || commas(-1234) != "-1,234" {
		t.Fatal("commas")
	}
}
