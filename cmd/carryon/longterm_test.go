package main

import (
	"context"
	"strings"
	"testing"
)

// The memory commands against a real server process, for two users with colliding namespaces
// (u1, u10) and identical keys: each sees only their own items through put, get, ls, search and
// rm, and their sessions' answers and exports only ever hold their own memory.
func TestLongTermCommandsPerUser(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data)
	alice := localKey(t, data)
	bob := addUser(t, data, "bob")
	as := func(key string, args ...string) (string, error) {
		return cliRun(context.Background(), srv, nil, map[string]string{"CARRYON_KEY": key}, args...)
	}
	ok := func(key string, args ...string) string {
		t.Helper()
		out, err := as(key, args...)
		if err != nil {
			t.Fatalf("carryon %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	for name, key := range map[string]string{"alice": alice, "bob": bob} {
		for _, ns := range []string{"u1", "u1.x", "u10"} {
			ok(key, "memory", "put", ns, "k", `{"who":"`+name+`"}`, "--text", "shared editors of "+name)
		}
	}
	if out := ok(alice, "memory", "put", "prefs", "editor", "vim", "--text", "alice prefers the vim editor", "--ttl", "720h"); !strings.Contains(out, "remembered prefs/editor") {
		t.Fatalf("put: %s", out)
	}
	// The checks look for the items' own words, not the bare names: a random id may spell "bob".
	for name, key := range map[string]string{"alice": alice, "bob": bob} {
		other := map[string]string{"alice": "bob", "bob": "alice"}[name]
		if out := ok(key, "memory", "get", "u1", "k"); !strings.Contains(out, "editors of "+name) || strings.Contains(out, "editors of "+other) {
			t.Fatalf("%s get u1/k:\n%s", name, out)
		}
		out := ok(key, "memory", "ls", "--namespace", "u1")
		if strings.Contains(out, "u10") || strings.Contains(out, `"who":"`+other) || strings.Count(out, "\n") != 3 {
			t.Fatalf("%s ls --namespace u1:\n%s", name, out)
		}
		for _, q := range [][]string{{"*"}, {"%"}, {}, {"shared", "editors"}, {"vim"}, {`"`}} {
			args := append([]string{"memory", "search", "--json"}, q...)
			if out := ok(key, args...); strings.Contains(out, "editors of "+other) || name == "bob" && strings.Contains(out, "vim editor") {
				t.Fatalf("%s search %q:\n%s", name, q, out)
			}
		}
	}
	if out, err := as(bob, "memory", "get", "prefs", "editor"); err == nil || !strings.Contains(err.Error(), "not_found") {
		t.Fatalf("bob reads alice's prefs/editor: %v\n%s", err, out)
	}
	if out := ok(alice, "memory", "search", "which", "editor?"); !strings.HasPrefix(out, "- prefs/editor: alice prefers the vim editor (score 1.00)") {
		t.Fatalf("alice search:\n%s", out)
	}

	// Each user's session: the answer and the export hold the user's own memory only.
	for name, key := range map[string]string{"alice": alice, "bob": bob} {
		r := must(t, srv.url, key, "POST", "/v1/chat", map[string]any{"message": "which editors do I prefer, vim?"}, 200).json(t)
		reply, id := r["reply"].(string), r["session_id"].(string)
		export := ok(key, "sessions", "export", id)
		switch name {
		case "alice":
			if !strings.Contains(reply, "Noted preference: alice prefers the vim editor") {
				t.Fatalf("alice's reply: %q", reply)
			}
		case "bob":
			if strings.Contains(reply, "alice prefers") || strings.Contains(export, "alice prefers") || strings.Contains(export, "editors of alice") {
				t.Fatalf("bob's session holds alice's memory:\n%s\n%s", reply, export)
			}
		}
	}

	ok(alice, "memory", "rm", "prefs", "editor")
	if out, err := as(alice, "memory", "get", "prefs", "editor"); err == nil {
		t.Fatalf("get after rm: %s", out)
	}
	if out := ok(alice, "memory", "search", "vim"); out != "" {
		t.Fatalf("search after rm:\n%s", out)
	}
	if _, err := as(alice, "memory", "put", "Bad NS", "k", "1"); err == nil || !strings.Contains(err.Error(), "invalid_request") {
		t.Fatalf("put with a bad namespace: %v", err)
	}
}
