package main

import (
	"testing"
	"time"
)

// TestRevokedKeyRefusedAtOnce: a server trusts a key it has read for a few seconds
// (users.KeyCacheTTL), yet a key revoked through it, or by `carryon users` on the same SQLite
// file while it runs, or a user forgotten that way, is refused by the very next request.
func TestRevokedKeyRefusedAtOnce(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data)
	admin := localKey(t, data)
	warm := func(key string) {
		for range 3 {
			must(t, srv.url, key, "GET", "/v1/me", nil, 200)
		}
	}
	bob := addUser(t, data, "bob")
	warm(bob)
	id := must(t, srv.url, admin, "GET", "/v1/users/bob/keys", nil, 200).json(t)["items"].([]any)[0].(map[string]any)["id"].(string)
	must(t, srv.url, admin, "DELETE", "/v1/keys/"+id, nil, 204)
	must(t, srv.url, bob, "GET", "/v1/me", nil, 401)

	carol := addUser(t, data, "carol")
	warm(carol)
	id = must(t, srv.url, admin, "GET", "/v1/users/carol/keys", nil, 200).json(t)["items"].([]any)[0].(map[string]any)["id"].(string)
	cli(t, srv, "users", "keys", "revoke", id)
	must(t, srv.url, carol, "GET", "/v1/me", nil, 401)

	dave := addUser(t, data, "dave")
	warm(dave)
	cli(t, srv, "users", "rm", "dave")
	must(t, srv.url, dave, "GET", "/v1/me", nil, 401)
}

// TestRevokedKeyRefusedEverywherePostgres: two instances on one PostgreSQL; a key both have
// read and trust is revoked through one, and the other refuses it well within the cache's TTL
// (its notification), as it refuses the key of a user forgotten through the first.
func TestRevokedKeyRefusedEverywherePostgres(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 2, nil)
	a, b := c.srvs[0], c.srvs[1]
	key := must(t, a.url, c.key, "POST", "/v1/users", map[string]any{"name": "erin"}, 201).json(t)["key"].(string)
	for range 3 {
		must(t, a.url, key, "GET", "/v1/me", nil, 200)
		must(t, b.url, key, "GET", "/v1/me", nil, 200)
	}
	id := must(t, a.url, c.key, "GET", "/v1/users/erin/keys", nil, 200).json(t)["items"].([]any)[0].(map[string]any)["id"].(string)
	must(t, a.url, c.key, "DELETE", "/v1/keys/"+id, nil, 204)
	must(t, a.url, key, "GET", "/v1/me", nil, 401)
	refused := func(srv *server, key string) bool {
		r, err := do(srv.url, key, "GET", "/v1/me", nil)
		return err == nil && r.status == 401
	}
	if !within(2*time.Second, func() bool { return refused(b, key) }) {
		t.Fatal("the other instance still takes the revoked key")
	}
	frank := must(t, a.url, c.key, "POST", "/v1/users", map[string]any{"name": "frank"}, 201).json(t)["key"].(string)
	must(t, b.url, frank, "GET", "/v1/me", nil, 200)
	must(t, a.url, c.key, "DELETE", "/v1/users/frank", nil, 200)
	if !within(2*time.Second, func() bool { return refused(b, frank) }) {
		t.Fatal("the other instance still takes the forgotten user's key")
	}
}
