package main

import (
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/httpapi"
)

// validBodies holds a well-formed request for every session- or run-scoped route, so that a refusal can
// only come from the ownership check. A new session route without an entry fails the test.
var validBodies = map[string]any{
	"GET /v1/sessions/{id}":                        nil,
	"PATCH /v1/sessions/{id}":                      map[string]any{"title": "taken"},
	"POST /v1/sessions/{id}/close":                 map[string]any{},
	"POST /v1/sessions/{id}/restore":               map[string]any{},
	"DELETE /v1/sessions/{id}":                     nil,
	"POST /v1/sessions/{id}/fork":                  map[string]any{},
	"POST /v1/sessions/{id}/messages":              appendBody("injected"),
	"GET /v1/sessions/{id}/messages":               nil,
	"DELETE /v1/sessions/{id}/messages/{seq}":      nil,
	"GET /v1/sessions/{id}/working_memory":         nil,
	"PATCH /v1/sessions/{id}/working_memory":       map[string]any{"patch": map[string]any{"goal": "hijacked"}},
	"GET /v1/sessions/{id}/working_memory/history": nil,
	"GET /v1/sessions/{id}/working_memory/diff":    nil,
	"GET /v1/sessions/{id}/memory":                 nil,
	"PATCH /v1/sessions/{id}/memory":               map[string]any{"patch": map[string]any{"goal": "hijacked"}},
	"GET /v1/sessions/{id}/memory/history":         nil,
	"GET /v1/sessions/{id}/memory/diff":            nil,
	"GET /v1/sessions/{id}/context":                nil,
	"POST /v1/sessions/{id}/runs":                  map[string]any{"message": "hi"},
	"GET /v1/sessions/{id}/runs":                   nil,
	"GET /v1/runs/{id}":                            nil,
	"GET /v1/runs/{id}/events":                     nil,
	"GET /v1/runs/{id}/actions":                    nil,
	"POST /v1/runs/{id}/cancel":                    map[string]any{},
	"POST /v1/runs/{id}/approve":                   map[string]any{"action_id": "act_x", "decision": "skip"},
	"POST /v1/runs/{id}/tool_outputs":              map[string]any{"outputs": []any{map[string]any{"call_id": "call_x", "output": "x"}}},
	"POST /v1/sessions/{id}/compact":               map[string]any{"keep_last": 1},
	"POST /v1/sessions/{id}/extract":               map[string]any{},
	"GET /v1/sessions/{id}/compactions":            nil,
	"GET /v1/sessions/{id}/export":                 nil,
	"GET /v1/sessions/{id}/storage":                nil,
	"GET /v1/sessions/{id}/usage":                  nil,
	"POST /v1/sessions/{id}/schedules":             map[string]any{"every": "1h", "message": "hijack"},
	"GET /v1/sessions/{id}/schedules":              nil,
	"GET /v1/schedules/{id}":                       nil,
	"PATCH /v1/schedules/{id}":                     map[string]any{"message": "hijacked"},
	"DELETE /v1/schedules/{id}":                    nil,
	"POST /v1/schedules/{id}/run":                  nil,
}

// queries holds the query a route needs to be well-formed.
var queries = map[string]string{
	"GET /v1/sessions/{id}/memory/diff":         "?from=0&to=1",
	"GET /v1/sessions/{id}/working_memory/diff": "?from=0&to=1",
}

// TestOwnershipOnEveryRoute walks the server's route table: user B on user A's session gets 404
// on every session route and changes nothing; no key or a bad key gets 401 on every non-public
// route; a non-admin gets 403 on admin routes.
func TestOwnershipOnEveryRoute(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data)
	alice := localKey(t, data)
	bob := addUser(t, data, "bob")
	id := must(t, srv.url, alice, "POST", "/v1/sessions", map[string]any{"title": "alice's", "working_memory": map[string]any{"goal": "g"}}, 201).json(t)["id"].(string)
	must(t, srv.url, alice, "POST", "/v1/sessions/"+id+"/messages", appendBody("private"), 201)
	runID := must(t, srv.url, alice, "POST", "/v1/sessions/"+id+"/runs", map[string]any{"message": "Plan the trip"}, 202).json(t)["id"].(string)
	waitRun(t, srv, alice, runID)
	schedID := must(t, srv.url, alice, "POST", "/v1/sessions/"+id+"/schedules", map[string]any{"cron": "0 8 1 1 *", "message": "yearly"}, 201).json(t)["id"].(string)
	before := must(t, srv.url, alice, "GET", "/v1/sessions/"+id, nil, 200).body

	checked := 0
	for _, rt := range httpapi.Routes() {
		name := rt.Method + " " + rt.Pattern
		owned := id
		if strings.HasPrefix(rt.Pattern, "/v1/runs/{id}") {
			owned = runID // a run of Alice's session
		}
		if strings.HasPrefix(rt.Pattern, "/v1/schedules/{id}") {
			owned = schedID // a schedule of Alice's session
		}
		path := strings.NewReplacer("{id}", owned, "{seq}", "1").Replace(rt.Pattern) + queries[name]
		switch rt.Auth {
		case httpapi.AuthPublic:
			continue
		case httpapi.AuthAdmin:
			must(t, srv.url, bob, rt.Method, path, map[string]any{}, 403)
		}
		must(t, srv.url, "", rt.Method, path, nil, 401)
		must(t, srv.url, "ck_notakey", rt.Method, path, nil, 401)
		if !rt.SessionScoped && owned == id {
			continue
		}
		body, ok := validBodies[name]
		if !ok {
			t.Errorf("route %s has no valid body in this test: add one so its owner check is tested", name)
			continue
		}
		r, err := do(srv.url, bob, rt.Method, path, body)
		if err != nil {
			t.Fatal(err)
		}
		if r.status != 404 || !strings.Contains(string(r.body), `"not_found"`) {
			t.Errorf("%s as another user = %d %s, want 404 not_found", name, r.status, r.body)
		}
		// The owner gets something other than 404 with the same request: the 404 above came
		// from the owner check, not from a malformed request.
		if rt.Method == "GET" {
			if r, _ := do(srv.url, alice, rt.Method, path, nil); r.status != 200 {
				t.Errorf("%s as the owner = %d %s", name, r.status, r.body)
			}
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("only %d session routes checked", checked)
	}
	after := must(t, srv.url, alice, "GET", "/v1/sessions/"+id, nil, 200).body
	if string(after) != string(before) {
		t.Fatalf("alice's session changed:\n%s\n%s", before, after)
	}
	if p := must(t, srv.url, bob, "GET", "/v1/sessions", nil, 200).json(t); len(p["items"].([]any)) != 0 {
		t.Fatalf("bob lists alice's sessions: %v", p)
	}
	must(t, srv.url, bob, "POST", "/v1/chat", map[string]any{"session_id": id, "message": "continue"}, 404)
	if sc := must(t, srv.url, alice, "GET", "/v1/schedules/"+schedID, nil, 200).json(t); sc["message"] != "yearly" {
		t.Fatalf("alice's schedule changed: %v", sc)
	}
	if p := must(t, srv.url, bob, "GET", "/v1/schedules", nil, 200).json(t); len(p["items"].([]any)) != 0 {
		t.Fatalf("bob lists alice's schedules: %v", p)
	}
	if n := must(t, srv.url, alice, "GET", "/v1/sessions/"+id+"/runs", nil, 200).json(t)["items"].([]any); len(n) != 1 {
		t.Fatalf("alice's session has %d runs, want 1", len(n))
	}
}

// waitRun polls a run until it leaves queued and running (for at most a minute).
func waitRun(t *testing.T, srv *server, key, runID string) map[string]any {
	t.Helper()
	var run map[string]any
	if !within(time.Minute, func() bool {
		run = must(t, srv.url, key, "GET", "/v1/runs/"+runID, nil, 200).json(t)
		s := run["status"]
		return s != "queued" && s != "running"
	}) {
		t.Fatalf("run %s did not end: %v", runID, run)
	}
	return run
}
