package main

import (
	"fmt"
	"strings"

	"github.com/carryon-hub/carryon/internal/httpapi"
)

// noKeyRoutes are the /v1 routes that change something but take no Idempotency-Key, by design,
// and why. Each refuses the header with 400 (checkControls) rather than ignore it.
var noKeyRoutes = map[string]string{
	"POST /v1/users":                                    "its answer holds the first key's secret, shown once and never stored, so it cannot be replayed (a retried creation finds the name taken: 409)",
	"POST /v1/users/{id}/keys":                          "its answer holds the key's secret, shown once and never stored, so it cannot be replayed",
	"PUT /v1/users/{id}/limits":                         "it sets the limits to values: a repeat sets them again and answers the same (updated_at moves only when a value changes)",
	"DELETE /v1/users/{id}":                             "the forget is many transactions and forgets the user's request ids with the rest: a repeat continues a cut-off forget or finds the user gone (404)",
	"POST /v1/memories/search":                          "a read: its query is a body",
	"POST /v1/sessions/{id}/extract":                    "the session's extraction mark makes it happen once per turn: a repeat learns only newer turns (none: an empty list)",
	"POST /v1/webhooks":                                 "its answer holds the signing secret, shown once and never stored with it, so it cannot be replayed",
	"POST /v1/webhooks/{id}/rotate":                     "its answer holds the new signing secret, shown once, so it cannot be replayed",
	"PATCH /v1/webhooks/{id}":                           "it sets fields to values: a repeat sets them again",
	"PATCH /v1/me/settings":                             "it sets the caller's settings to values: a repeat sets them again",
	"DELETE /v1/webhooks/{id}":                          "a repeat finds the webhook gone (404)",
	"POST /v1/webhooks/{id}/deliveries/{did}/redeliver": "a repeat queues the same delivery again, which the receiver dedupes by webhook-id",
}

// nativeCases are the cases of every write route of /v1, one per route of the route table.
func (h *repeatHub) nativeCases() []repeatCase {
	t, alice := h.t, h.admin
	v1 := func(key, method, path string, body any) request {
		return request{door: "v1", method: method, path: path, body: body, key: key}
	}
	session := func(x *target) string { return h.get(alice, "/v1/sessions/"+x.id+"?messages=1000") }
	sessionAnd := func(paths ...string) func(*target) string {
		return func(x *target) string {
			s := session(x)
			for _, p := range paths {
				s += "\n" + h.get(alice, strings.ReplaceAll(p, "{id}", x.id))
			}
			return s
		}
	}
	run := func(x *target) string {
		return h.get(alice, "/v1/runs/"+x.run) + "\n" + h.get(alice, "/v1/runs/"+x.run+"/actions")
	}
	settleRun := func(x *target, _ answer) { waitRun(t, h.srv, alice, x.run) }
	// own is the sessions of the case's own user.
	own := func(x *target) string { return h.get(x.user, "/v1/sessions?limit=1000") }
	// at sends r with If-Match: the version its target is at now.
	at := func(r request, version int64) request {
		r.headers = append(r.headers, fmt.Sprintf(`If-Match: "%d"`, version))
		return r
	}
	ver := func(x *target) int64 {
		return int64(must(t, h.srv.url, alice, "GET", "/v1/sessions/"+x.id, nil, 200).json(t)["version"].(float64))
	}
	fresh := func(body any) string {
		return must(t, h.srv.url, alice, "POST", "/v1/sessions", body, 201).json(t)["id"].(string)
	}
	cases := []repeatCase{
		{name: "POST /v1/sessions", prepare: func(x *target) request {
			x.user = h.newUser("creator")
			return v1(x.user, "POST", "/v1/sessions", map[string]any{"title": "made once", "working_memory": map[string]any{"goal": "g"}})
		}, state: own},
		{name: "PATCH /v1/sessions/{id}", prepare: func(x *target) request {
			x.id = fresh(map[string]any{})
			return at(v1(alice, "PATCH", "/v1/sessions/"+x.id, map[string]any{"title": "renamed", "metadata": map[string]any{"k": "v"}}), ver(x))
		}, state: session},
		{name: "POST /v1/sessions/{id}/close", prepare: func(x *target) request {
			x.id = fresh(map[string]any{})
			return at(v1(alice, "POST", "/v1/sessions/"+x.id+"/close", nil), ver(x))
		}, state: session},
		{name: "POST /v1/sessions/{id}/restore", prepare: func(x *target) request {
			x.id = fresh(map[string]any{})
			must(t, h.srv.url, alice, "POST", "/v1/sessions/"+x.id+"/close", nil, 200)
			return at(v1(alice, "POST", "/v1/sessions/"+x.id+"/restore", nil), ver(x))
		}, state: session},
		{name: "DELETE /v1/sessions/{id}", prepare: func(x *target) request {
			x.id = fresh(map[string]any{"title": "doomed"})
			return at(v1(alice, "DELETE", "/v1/sessions/"+x.id, nil), ver(x))
		}, state: func(x *target) string { return h.status(alice, "/v1/sessions/"+x.id) }},
		{name: "POST /v1/sessions/{id}/fork", prepare: func(x *target) request {
			x.user = h.newUser("forker")
			src := must(t, h.srv.url, x.user, "POST", "/v1/sessions", map[string]any{"title": "source"}, 201).json(t)["id"].(string)
			must(t, h.srv.url, x.user, "POST", "/v1/sessions/"+src+"/messages", appendBody("before the fork"), 201)
			return at(v1(x.user, "POST", "/v1/sessions/"+src+"/fork", map[string]any{}), 2)
		}, state: own},
		{name: "POST /v1/sessions/{id}/messages", prepare: func(x *target) request {
			x.id = fresh(map[string]any{})
			return at(v1(alice, "POST", "/v1/sessions/"+x.id+"/messages", appendBody("appended once")), ver(x))
		}, state: session},
		{name: "DELETE /v1/sessions/{id}/messages/{seq}", prepare: func(x *target) request {
			x.id = fresh(map[string]any{})
			must(t, h.srv.url, alice, "POST", "/v1/sessions/"+x.id+"/messages", appendBody("first"), 201)
			must(t, h.srv.url, alice, "POST", "/v1/sessions/"+x.id+"/messages", appendBody("second"), 201)
			return at(v1(alice, "DELETE", "/v1/sessions/"+x.id+"/messages/1", nil), ver(x))
		}, state: sessionAnd("/v1/sessions/{id}/messages?include_deleted=true")},
		{name: "PATCH /v1/sessions/{id}/working_memory", prepare: func(x *target) request {
			x.id = fresh(map[string]any{})
			return at(v1(alice, "PATCH", "/v1/sessions/"+x.id+"/working_memory", map[string]any{"patch": map[string]any{"goal": "patched once"}}), ver(x))
		}, state: sessionAnd("/v1/sessions/{id}/working_memory/history")},
		// The deprecated alias of the one above.
		{name: "PATCH /v1/sessions/{id}/memory", prepare: func(x *target) request {
			x.id = fresh(map[string]any{})
			return at(v1(alice, "PATCH", "/v1/sessions/"+x.id+"/memory", map[string]any{"patch": map[string]any{"goal": "patched once"}}), ver(x))
		}, state: sessionAnd("/v1/sessions/{id}/memory/history")},
		{name: "POST /v1/sessions/{id}/runs", prepare: func(x *target) request {
			x.id = fresh(map[string]any{})
			return at(v1(alice, "POST", "/v1/sessions/"+x.id+"/runs", map[string]any{"message": "hello", "agent": "slow"}), ver(x))
		}, settle: func(x *target, a answer) { x.run = jsonField(t, a.body, "id"); waitRun(t, h.srv, alice, x.run) },
			state: sessionAnd("/v1/sessions/{id}/runs")},
		{name: "POST /v1/sessions/{id}/runs (streamed)", prepare: func(x *target) request {
			x.id = fresh(map[string]any{})
			r := at(v1(alice, "POST", "/v1/sessions/"+x.id+"/runs", map[string]any{"message": "stream it"}), ver(x))
			r.headers = append(r.headers, "Accept: text/event-stream")
			return r
		}, state: sessionAnd("/v1/sessions/{id}/runs")},
		{name: "POST /v1/runs/{id}/cancel", prepare: func(x *target) request {
			x.id, x.run = h.waitingRun("requires_action")
			return v1(alice, "POST", "/v1/runs/"+x.run+"/cancel", nil)
		}, settle: settleRun, state: run},
		{name: "POST /v1/runs/{id}/approve", prepare: func(x *target) request {
			x.id, x.run = h.waitingRun("waiting_approval")
			return v1(alice, "POST", "/v1/runs/"+x.run+"/approve", map[string]any{"action_id": h.waitingAction(x.run), "decision": "approve"})
		}, settle: settleRun, state: run},
		{name: "POST /v1/runs/{id}/tool_outputs", prepare: func(x *target) request {
			x.id, x.run = h.waitingRun("requires_action")
			return v1(alice, "POST", "/v1/runs/"+x.run+"/tool_outputs", map[string]any{"outputs": []any{
				map[string]any{"call_id": h.waitingCall(x.run), "output": "sunny"}}})
		}, settle: settleRun, state: run},
		{name: "POST /v1/chat", prepare: func(x *target) request {
			x.user = h.newUser("chatter")
			return v1(x.user, "POST", "/v1/chat", map[string]any{"message": "hello"})
		}, state: own},
		{name: "POST /v1/chat (on a session)", prepare: func(x *target) request {
			x.id = fresh(map[string]any{})
			return at(v1(alice, "POST", "/v1/chat", map[string]any{"session_id": x.id, "message": "hello"}), ver(x))
		}, state: sessionAnd("/v1/sessions/{id}/runs")},
		{name: "PUT /v1/memories/{namespace}/{key}", prepare: func(x *target) request {
			return at(v1(alice, "PUT", "/v1/memories/notes/kept", map[string]any{"value": map[string]any{"editor": "vim"}}), 0)
		}, state: func(x *target) string { return h.get(alice, "/v1/memories/notes/kept") }},
		{name: "POST /v1/memories/{namespace}", prepare: func(x *target) request {
			return v1(alice, "POST", "/v1/memories/added", map[string]any{"text": "likes green tea"})
		}, state: func(x *target) string { return h.get(alice, "/v1/memories?namespace=added") }},
		{name: "DELETE /v1/memories/{namespace}/{key}", prepare: func(x *target) request {
			must(t, h.srv.url, alice, "PUT", "/v1/memories/doomed/gone", map[string]any{"value": "x"}, 200)
			return at(v1(alice, "DELETE", "/v1/memories/doomed/gone", nil), 1)
		}, state: func(x *target) string {
			return h.status(alice, "/v1/memories/doomed/gone") + h.get(alice, "/v1/memories?namespace=doomed")
		}},
		{name: "POST /v1/sessions/{id}/compact", prepare: func(x *target) request {
			x.id = fresh(map[string]any{})
			must(t, h.srv.url, alice, "POST", "/v1/sessions/"+x.id+"/messages", map[string]any{"messages": []map[string]string{
				{"role": "user", "content": "the plan is ZEBRA"}, {"role": "assistant", "content": "noted"}, {"role": "user", "content": "next"}}}, 201)
			return at(v1(alice, "POST", "/v1/sessions/"+x.id+"/compact", map[string]any{"keep_last": 1}), ver(x))
		}, state: sessionAnd("/v1/sessions/{id}/compactions")},
		{name: "POST /v1/sessions/import", prepare: func(x *target) request {
			x.user = h.newUser("importer")
			src := must(t, h.srv.url, x.user, "POST", "/v1/sessions", map[string]any{"title": "exported"}, 201).json(t)["id"].(string)
			must(t, h.srv.url, x.user, "POST", "/v1/sessions/"+src+"/messages", appendBody("carried over"), 201)
			bundle := must(t, h.srv.url, x.user, "GET", "/v1/sessions/"+src+"/export", nil, 200).body
			r := v1(x.user, "POST", "/v1/sessions/import", bundle)
			r.headers = append(r.headers, "Content-Type: application/x-ndjson")
			return r
		}, state: own},
		{name: "POST /v1/sessions/{id}/schedules", prepare: func(x *target) request {
			x.id = fresh(map[string]any{})
			return v1(alice, "POST", "/v1/sessions/"+x.id+"/schedules", map[string]any{"cron": "0 8 1 1 *", "message": "once a year"})
		}, state: sessionAnd("/v1/sessions/{id}/schedules")},
		{name: "PATCH /v1/schedules/{id}", prepare: func(x *target) request {
			x.id = fresh(map[string]any{})
			x.item = must(t, h.srv.url, alice, "POST", "/v1/sessions/"+x.id+"/schedules", map[string]any{"cron": "0 8 1 1 *", "message": "m"}, 201).json(t)["id"].(string)
			return v1(alice, "PATCH", "/v1/schedules/"+x.item, map[string]any{"paused": true, "message": "changed once"})
		}, state: func(x *target) string { return h.get(alice, "/v1/schedules/"+x.item) }},
		{name: "DELETE /v1/schedules/{id}", prepare: func(x *target) request {
			x.id = fresh(map[string]any{})
			x.item = must(t, h.srv.url, alice, "POST", "/v1/sessions/"+x.id+"/schedules", map[string]any{"cron": "0 8 1 1 *", "message": "m"}, 201).json(t)["id"].(string)
			return v1(alice, "DELETE", "/v1/schedules/"+x.item, nil)
		}, state: func(x *target) string { return h.status(alice, "/v1/schedules/"+x.item) }},
		{name: "POST /v1/schedules/{id}/run", prepare: func(x *target) request {
			x.id = fresh(map[string]any{})
			x.item = must(t, h.srv.url, alice, "POST", "/v1/sessions/"+x.id+"/schedules", map[string]any{"cron": "0 8 1 1 *", "message": "now", "overlap": "enqueue"}, 201).json(t)["id"].(string)
			return v1(alice, "POST", "/v1/schedules/"+x.item+"/run", nil)
		}, settle: func(x *target, a answer) { x.run = jsonField(t, a.body, "id"); waitRun(t, h.srv, alice, x.run) },
			state: sessionAnd("/v1/sessions/{id}/runs")},
		{name: "PUT /v1/users/{id}/budget", prepare: func(x *target) request {
			h.newUser("spender")
			return v1(alice, "PUT", "/v1/users/spender/budget", map[string]any{"day": map[string]any{"tokens": 5000}, "month": map[string]any{"usd": 2.5, "on_exceed": "fail"}})
		}, state: func(x *target) string { return h.get(alice, "/v1/users/spender/budget") }},
		{name: "DELETE /v1/keys/{id}", prepare: func(x *target) request {
			h.newUser("holder")
			x.item = must(t, h.srv.url, alice, "POST", "/v1/users/holder/keys", nil, 201).json(t)["key"].(map[string]any)["id"].(string)
			return v1(alice, "DELETE", "/v1/keys/"+x.item, nil)
		}, state: func(x *target) string { return h.get(alice, "/v1/users/holder/keys") }},
	}
	h.checkRouteTable(cases)
	return cases
}

// checkRouteTable fails the test unless every write route of the table has a case, and every
// other route that is not a GET is listed in noKeyRoutes and refuses Idempotency-Key.
func (h *repeatHub) checkRouteTable(cases []repeatCase) {
	t := h.t
	has := map[string]bool{}
	for _, c := range cases {
		has[strings.SplitN(c.name, " (", 2)[0]] = true
	}
	h.versioned = map[string]bool{}
	for _, rt := range httpapi.Routes() {
		name := rt.Method + " " + rt.Pattern
		h.versioned[name] = rt.Versioned
		switch {
		case rt.Write && !has[name]:
			t.Errorf("write route %s has no case in TestRepeatEveryWrite: add one", name)
		case rt.Write:
			delete(has, name)
		case rt.Method == "GET":
		case noKeyRoutes[name] == "":
			t.Errorf("%s takes no Idempotency-Key and noKeyRoutes says not why", name)
		default:
			path := strings.NewReplacer("{id}", "nobody").Replace(rt.Pattern)
			if r, _ := do(h.srv.url, h.admin, rt.Method, path, map[string]any{}, "Idempotency-Key: k"); r.status != 400 {
				t.Errorf("%s with Idempotency-Key = %d %s, want 400", name, r.status, r.body)
			}
		}
	}
	for name := range has {
		t.Errorf("case %s names no write route", name)
	}
}

// newUser makes a user (not an admin) and returns its key.
func (h *repeatHub) newUser(name string) string {
	return must(h.t, h.srv.url, h.admin, "POST", "/v1/users", map[string]any{"name": name}, 201).json(h.t)["key"].(string)
}

// get reads path as key: its status and body.
func (h *repeatHub) get(key, path string) string {
	h.t.Helper()
	r, err := do(h.srv.url, key, "GET", path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return fmt.Sprintf("%d %s", r.status, r.body)
}

// status reads path as key: its status only (a problem's body names the request).
func (h *repeatHub) status(key, path string) string {
	h.t.Helper()
	r, err := do(h.srv.url, key, "GET", path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return fmt.Sprint(r.status)
}

// waitingRun starts a run on a new session of the admin that stops and waits: in
// requires_action (for a client tool's output) or waiting_approval (for a decision on
// write_file).
func (h *repeatHub) waitingRun(status string) (session, run string) {
	t := h.t
	t.Helper()
	session = must(t, h.srv.url, h.admin, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	body := map[string]any{"message": picnic, "agent": "careful"}
	if status == "requires_action" {
		body = map[string]any{"message": "the weather?\n/tool get_weather {\"city\":\"Paris\"}", "tools": []any{map[string]any{
			"name": "get_weather", "parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}}
	}
	run = must(t, h.srv.url, h.admin, "POST", "/v1/sessions/"+session+"/runs", body, 202).json(t)["id"].(string)
	if got := waitRun(t, h.srv, h.admin, run); got["status"] != status {
		t.Fatalf("the run is %v, want %s", got, status)
	}
	return session, run
}

// waitingAction is the id of the action a waiting_approval run waits on.
func (h *repeatHub) waitingAction(run string) string {
	for _, a := range must(h.t, h.srv.url, h.admin, "GET", "/v1/runs/"+run+"/actions", nil, 200).json(h.t)["items"].([]any) {
		if a := a.(map[string]any); a["status"] == "waiting" {
			return a["id"].(string)
		}
	}
	h.t.Fatalf("run %s waits on no action", run)
	return ""
}

// waitingCall is the call id of the client tool call a requires_action run waits on.
func (h *repeatHub) waitingCall(run string) string {
	r := must(h.t, h.srv.url, h.admin, "GET", "/v1/runs/"+run, nil, 200).json(h.t)
	return r["required_action"].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["call_id"].(string)
}
