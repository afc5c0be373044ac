package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/poll"
)

// TestReadReplicaOverHTTP runs a server with --read-dsn on a real primary and a pg_basebackup
// standby: the listings answer from the standby with X-Carryon-Read: replica; the restore before
// a write, a lookup by external id, the answers of writes and the reads of what was just written
// never come from it (with its replay paused, they still see every write); once the paused
// standby is behind --read-max-lag, and when it is down, the primary answers the listings too.
func TestReadReplicaOverHTTP(t *testing.T) {
	pair := pgtest.NewPair(t)
	srv := startServer(t, t.TempDir(), "--db", pair.Primary, "--read-dsn", pair.Standby, "--read-max-lag", "4s", "--workers", "0")
	key := localKey(t, srv.data)
	get := func(path string) response { t.Helper(); return must(t, srv.url, key, "GET", path, nil, 200) }
	replica := func(r response) bool { return r.header.Get("X-Carryon-Read") == "replica" }
	noReplica := func(what string, r response) {
		t.Helper()
		if v := r.header.Get("X-Carryon-Read"); v != "" {
			t.Fatalf("%s: X-Carryon-Read %q, want none (the primary answers it)", what, v)
		}
	}

	created := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"external_id": "ext-1"}, 201)
	noReplica("a write's answer", created)
	s1 := created.json(t)["id"].(string)
	appended := must(t, srv.url, key, "POST", "/v1/sessions/"+s1+"/messages", appendBody("first"), 201)
	noReplica("a write's answer", appended)
	// The standby has replayed the last commit once a listing it answers shows it.
	caughtUp := func(sid, text string) {
		t.Helper()
		poll.Eventually(t, "the standby answers the listings with the last write", func() bool {
			r := get("/v1/sessions/" + sid + "/messages")
			return replica(r) && strings.Contains(string(r.body), text)
		})
	}
	caughtUp(s1, "first")
	for _, path := range []string{"/v1/sessions", "/v1/sessions/" + s1 + "/runs", "/v1/sessions/" + s1 + "/working_memory/history",
		"/v1/sessions/" + s1 + "/compactions", "/v1/memories"} {
		if r := get(path); !replica(r) {
			t.Errorf("GET %s: no X-Carryon-Read: replica from a standby within its bound", path)
		}
	}
	if r := must(t, srv.url, key, "POST", "/v1/memories/search", map[string]any{"query": "anything"}, 200); !replica(r) {
		t.Errorf("POST /v1/memories/search: no X-Carryon-Read: replica")
	}
	for _, path := range []string{"/v1/sessions/" + s1, "/v1/sessions/" + s1 + "/working_memory", "/v1/sessions/" + s1 + "/context",
		"/v1/sessions?external_id=ext-1", "/v1/me"} {
		noReplica("GET "+path, get(path))
	}

	pair.PauseReplay()
	created = must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201)
	noReplica("a write's answer", created)
	s2 := created.json(t)["id"].(string)
	if r := get("/v1/sessions"); !replica(r) || strings.Contains(string(r.body), s2) {
		t.Fatalf("the session list right after a create with replay paused: replica %v, lists the new session %v; want the standby's older list",
			replica(r), strings.Contains(string(r.body), s2))
	}
	// Read your writes: the restore, and a write that depends on its version, see the primary.
	view := get("/v1/sessions/" + s2)
	noReplica("the restore of a new session", view)
	etag := view.header.Get("ETag")
	for i := range 3 {
		r := must(t, srv.url, key, "POST", "/v1/sessions/"+s2+"/messages", appendBody(fmt.Sprintf("m%d", i)), 201, "If-Match: "+etag)
		noReplica("an append", r)
		etag = r.header.Get("ETag")
		v := get("/v1/sessions/" + s2)
		noReplica("the restore after an append", v)
		if got := v.header.Get("ETag"); got != etag {
			t.Fatalf("the restore after append %d has ETag %s, the append answered %s", i, got, etag)
		}
	}
	// A listing of a session the standby does not have yet is answered by the primary.
	msgs := get("/v1/sessions/" + s2 + "/messages")
	noReplica("the messages of a session the standby lacks", msgs)
	if !strings.Contains(string(msgs.body), "m2") {
		t.Fatalf("messages of the new session: %s", msgs.body)
	}
	poll.Eventually(t, "the paused standby skipped after --read-max-lag", func() bool {
		r := get("/v1/sessions")
		return !replica(r) && strings.Contains(string(r.body), s2)
	})

	pair.ResumeReplay()
	must(t, srv.url, key, "POST", "/v1/sessions/"+s1+"/messages", appendBody("after resume"), 201)
	caughtUp(s1, "after resume")

	if m := must(t, srv.url, "", "GET", "/metrics", nil, 200); !strings.Contains(string(m.body), `carryon_store_tx_duration_seconds_count{kind="replica",outcome="ok"}`) {
		t.Error("/metrics counts no read the standby answered")
	}

	pair.StopStandby()
	poll.Eventually(t, "the primary answers the listings with the standby down", func() bool {
		r, err := do(srv.url, key, "GET", "/v1/sessions", nil)
		return err == nil && r.status == 200 && !replica(r) && strings.Contains(string(r.body), s2)
	})
}

// TestReadReplicaFlags refuses a read replica serve cannot use, before anything opens.
func TestReadReplicaFlags(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"--read-dsn postgres://x@127.0.0.1:1/db", "--read-dsn needs a PostgreSQL --db"},
		{"--db postgres://x@127.0.0.1:1/db --read-dsn /tmp/replica.db", "--read-dsn must be a postgres:// URL"},
		{"--read-max-lag 0s", "--read-max-lag must be more than 0"},
	} {
		_, stderr, code := runBinary(t, nil, append([]string{"serve", "--data", t.TempDir()}, strings.Fields(tc.args)...)...)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("serve %s: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
