package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/client"
)

// TestSessionSearch: GET /v1/sessions searches by text, metadata, agent and time on SQLite,
// through HTTP and the Go client; deleted messages are not found, forks are by what they
// inherit, another user's sessions never are, and bad input is a 400 that says what is wrong.
func TestSessionSearch(t *testing.T) {
	t.Parallel()
	testSessionSearch(t, "")
}

// TestSessionSearchPostgres: the same on PostgreSQL.
func TestSessionSearchPostgres(t *testing.T) {
	t.Parallel()
	testSessionSearch(t, pgDatabase(t))
}

func testSessionSearch(t *testing.T, dsn string) {
	var args []string
	if dsn != "" {
		args = append(args, "--db", dsn)
	}
	data := t.TempDir()
	srv := startServer(t, data, args...)
	key := localKey(t, data)
	other := must(t, srv.url, key, "POST", "/v1/users", map[string]any{"name": "searcher2"}, 201).json(t)["key"].(string)

	create := func(k, title, meta string) string {
		body := map[string]any{"title": title}
		if meta != "" {
			body["metadata"] = json.RawMessage(meta)
		}
		return must(t, srv.url, k, "POST", "/v1/sessions", body, 201).json(t)["id"].(string)
	}
	appendTo := func(k, id string, texts ...string) {
		var msgs []map[string]any
		for _, s := range texts {
			msgs = append(msgs, map[string]any{"role": "user", "content": s})
		}
		must(t, srv.url, k, "POST", "/v1/sessions/"+id+"/messages", map[string]any{"messages": msgs}, 201)
	}
	ids := func(k, query string) []string {
		t.Helper()
		var out []string
		for _, it := range must(t, srv.url, k, "GET", "/v1/sessions?"+query, nil, 200).json(t)["items"].([]any) {
			out = append(out, it.(map[string]any)["id"].(string))
		}
		return out
	}
	want := func(k, query string, w ...string) {
		t.Helper()
		if got := ids(k, query); !reflect.DeepEqual(got, w) {
			t.Fatalf("GET /v1/sessions?%s = %v, want %v", query, got, w)
		}
	}

	a := create(key, "Billing dispute", `{"team":"support","tier":"gold"}`)
	appendTo(key, a, "the invoice for March is wrong", "refund issued")
	b := create(key, "Kubernetes upgrade", `{"team":"infra","tier":"1"}`)
	appendTo(key, b, "upgrade the cluster on Friday", "the invoice of the cloud provider")
	c := create(key, "", `{"team":"support","tier":1}`)
	appendTo(key, c, "password reset")
	theirs := create(other, "invoice", `{"team":"support"}`)
	appendTo(other, theirs, "invoice invoice")
	all := []string{c, b, a}
	want(key, "", all...) // no search: today's answer

	want(key, "q=invoice", b, a)
	want(key, "q="+url.QueryEscape("Invoice March"), a) // every word, in one message
	want(key, "q="+url.QueryEscape("invoice refund"))   // two messages: no match
	want(key, "q=refu", a)                              // the last word as a prefix
	want(key, "q=kubernetes", b)                        // the title
	want(key, "q=invoice&metadata[team]=support", a)
	want(key, "metadata[team]=support", c, a)
	want(key, "metadata[team]=support&metadata[tier]=1") // tier 1 of c is a number
	want(key, "metadata[tier]=1", b)                     // a string
	want(key, "agent=default", all...)
	want(key, "agent=nobody")
	want(other, "q=invoice", theirs) // each user finds only their own

	// Time bounds, and paging through a search.
	sb := must(t, srv.url, key, "GET", "/v1/sessions/"+b, nil, 200).json(t)
	created, _ := time.Parse(time.RFC3339Nano, sb["created_at"].(string))
	want(key, "created_after="+url.QueryEscape(created.Format(time.RFC3339Nano)), c)
	want(key, "created_before="+url.QueryEscape(created.Format(time.RFC3339Nano)), a)
	want(key, "updated_after="+url.QueryEscape(created.Add(-time.Hour).Format(time.RFC3339)), all...)
	page := must(t, srv.url, key, "GET", "/v1/sessions?q=the&limit=1", nil, 200).json(t)
	if items := page["items"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != b || page["next_cursor"] == nil {
		t.Fatalf("first page of q=the: %v", page)
	}
	want(key, "q=the&limit=1&cursor="+url.QueryEscape(page["next_cursor"].(string)), a)

	// A fork shows its parent's messages and is found by them; a deleted message is found no
	// more in the session that deleted it, while a fork made before keeps it.
	f := must(t, srv.url, key, "POST", "/v1/sessions/"+a+"/fork", map[string]any{"title": "fork"}, 201).json(t)["id"].(string)
	want(key, "q=march", f, a)
	must(t, srv.url, key, "DELETE", "/v1/sessions/"+a+"/messages/1", nil, 200)
	want(key, "q=march", f)
	must(t, srv.url, key, "DELETE", "/v1/sessions/"+f+"/messages/1", nil, 200)
	want(key, "q=march")
	must(t, srv.url, key, "DELETE", "/v1/sessions/"+a, nil, 204)
	want(key, "q=refund", f) // the fork keeps its copy of its parent's history

	// The Go client passes every filter.
	cl := client.New(srv.url, key)
	pg, err := cl.List(context.Background(), carryon.SessionFilter{Query: "cluster friday", Metadata: map[string]string{"team": "infra"},
		Agent: "default", CreatedAfter: created.Add(-time.Second), UpdatedBefore: time.Now().Add(time.Hour)})
	if err != nil || len(pg.Items) != 1 || pg.Items[0].ID != b {
		t.Fatalf("client search = %+v, %v", pg, err)
	}

	// Bad input: 400 with a detail that names what is wrong.
	for query, detail := range map[string]string{
		"q=":                              `"q" is empty`,
		"q=" + url.QueryEscape("!!! ..."): "no word",
		"q=" + strings.Repeat("a", 257):   "limit is 256",
		"q=" + url.QueryEscape("a b c d e f g h i"): "9 words",
		"metadata=x":                          "metadata[key]=value",
		"metadata[a%20b]=x":                   "metadata filter key",
		"metadata[a][b]=x":                    "metadata filter key",
		"metadata[]=x":                        "unknown query parameter",
		"created_after=yesterday":             "RFC 3339",
		"updated_before=2026-13-01T00:00:00Z": "RFC 3339",
		"created_after=2026-01-02T00:00:00Z&created_before=2026-01-01T00:00:00Z": "created_after must be before",
		"q=a&q=b": "given 2 times",
	} {
		r := must(t, srv.url, key, "GET", "/v1/sessions?"+query, nil, 400)
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
			t.Errorf("%s: Content-Type %q", query, ct)
		}
		if d := fmt.Sprint(r.json(t)["detail"]); !strings.Contains(d, detail) {
			t.Errorf("%s: detail %q, want it to say %q", query, d, detail)
		}
	}
}
