package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// budgetAgents price the scripted model: 1 and 2 milli-dollars a token in and out.
const budgetAgents = `providers:
  offline: {kind: scripted}
agents:
  default:
    provider: offline
    model: tiny
prices:
  tiny: {input: 1000, output: 2000}
`

// startBudgetServer starts a server on a data directory of its own with budgetAgents' priced
// models, and returns it with that directory.
func startBudgetServer(t *testing.T) (*server, string) {
	t.Helper()
	data := t.TempDir()
	file := filepath.Join(data, "agents.yaml")
	if err := os.WriteFile(file, []byte(budgetAgents), 0o600); err != nil {
		t.Fatal(err)
	}
	return startServer(t, data, "--agents", file), data
}

// TestBudgets sets, reads and exceeds budgets through a real server: a session's budget pauses
// its run in waiting_approval with what was spent and the limit, an approval without a raise
// pauses it again, a raise and an approval continue the same run; a user's day budget set by an
// admin fails a run with on_exceed fail; spend shows in the session, in /v1/me/usage and in
// /metrics; bad budgets are 400 and change nothing.
func TestBudgets(t *testing.T) {
	t.Parallel()
	srv, data := startBudgetServer(t)
	alice := localKey(t, data)
	bob := addUser(t, data, "bob")

	// Bad input: 400, and nothing is made.
	for _, bad := range []any{
		map[string]any{"tokens": -1}, map[string]any{"tokens": "many"}, map[string]any{"usd": -0.5},
		map[string]any{"on_exceed": "explode", "tokens": 5}, map[string]any{"tokens": 1.5}, "lots", map[string]any{"cents": 5},
	} {
		r := must(t, srv.url, alice, "POST", "/v1/sessions", map[string]any{"title": "bad", "budget": bad}, 400)
		if !strings.Contains(string(r.body), "budget") {
			t.Errorf("budget %v: problem %s does not name the budget", bad, r.body)
		}
	}
	if n := len(must(t, srv.url, alice, "GET", "/v1/sessions", nil, 200).json(t)["items"].([]any)); n != 0 {
		t.Fatalf("bad creates made %d sessions", n)
	}

	sess := must(t, srv.url, alice, "POST", "/v1/sessions", map[string]any{"title": "budgeted", "budget": map[string]any{"tokens": 1}}, 201).json(t)
	id := sess["id"].(string)
	if b := sess["budget"].(map[string]any); b["tokens"] != 1.0 || b["on_exceed"] != "pause" {
		t.Fatalf("created session's budget = %v", b)
	}
	// A bad update changes nothing: same version, same budget.
	must(t, srv.url, alice, "PATCH", "/v1/sessions/"+id, map[string]any{"budget": map[string]any{"tokens": -3}}, 400)
	must(t, srv.url, alice, "PATCH", "/v1/sessions/"+id, map[string]any{"budget": map[string]any{"usd": "free"}}, 400)
	if got := must(t, srv.url, alice, "GET", "/v1/sessions/"+id, nil, 200).json(t); got["version"] != 1.0 || got["budget"].(map[string]any)["tokens"] != 1.0 {
		t.Fatalf("after bad updates: version %v budget %v", got["version"], got["budget"])
	}

	runID := must(t, srv.url, alice, "POST", "/v1/sessions/"+id+"/runs", map[string]any{"message": "Write a haiku about the sea"}, 202).json(t)["id"].(string)
	run := waitRun(t, srv, alice, runID)
	stop, _ := run["budget_stop"].(map[string]any)
	if run["status"] != "waiting_approval" || stop == nil || stop["reason"] != "budget_exceeded" || stop["scope"] != "session" {
		t.Fatalf("run = %v", run)
	}
	spent := stop["spent"].(map[string]any)
	if spent["tokens"].(float64) < 1 || spent["usd"].(float64) <= 0 || stop["limit"].(map[string]any)["tokens"] != 1.0 {
		t.Fatalf("budget stop = %v", stop)
	}
	events := string(must(t, srv.url, alice, "GET", "/v1/runs/"+runID+"/events?follow=false", nil, 200).body)
	if !strings.Contains(events, "event: run.waiting") || !strings.Contains(events, `"reason":"budget_exceeded"`) {
		t.Fatalf("events do not report the budget stop:\n%s", events)
	}
	view := must(t, srv.url, alice, "GET", "/v1/sessions/"+id, nil, 200).json(t)
	if s := view["spend"].(map[string]any); s["tokens"] != spent["tokens"] || s["usd"] != spent["usd"] {
		t.Fatalf("session spend = %v, the stop says %v", s, spent)
	}

	// An approval without a raise stops the run again at once.
	must(t, srv.url, alice, "POST", "/v1/runs/"+runID+"/approve", map[string]any{"decision": "approve"}, 200)
	if again := waitRun(t, srv, alice, runID); again["status"] != "waiting_approval" || again["budget_stop"] == nil || again["step"] != run["step"] {
		t.Fatalf("approved without a raise: %v", again)
	}
	// A decision for an action is refused: the run waits for no action.
	must(t, srv.url, alice, "POST", "/v1/runs/"+runID+"/approve", map[string]any{"decision": "skip"}, 400)
	must(t, srv.url, bob, "POST", "/v1/runs/"+runID+"/approve", map[string]any{"decision": "approve"}, 404)

	// Raise it (a new version) and approve: the same run goes on to its answer.
	v := must(t, srv.url, alice, "GET", "/v1/sessions/"+id, nil, 200).json(t)["version"].(float64)
	up := must(t, srv.url, alice, "PATCH", "/v1/sessions/"+id, map[string]any{"budget": map[string]any{"tokens": 1000000}}, 200, fmt.Sprintf(`If-Match: "%d"`, int64(v))).json(t)
	if up["version"] != v+1 {
		t.Fatalf("raising the budget left version %v, want %v", up["version"], v+1)
	}
	must(t, srv.url, alice, "POST", "/v1/runs/"+runID+"/approve", map[string]any{"decision": "approve"}, 200)
	done := waitRun(t, srv, alice, runID)
	if done["status"] != "succeeded" || done["reply"] == "" || done["budget_stop"] != nil {
		t.Fatalf("after a raise: %v", done)
	}

	view = must(t, srv.url, alice, "GET", "/v1/sessions/"+id, nil, 200).json(t)
	usage := must(t, srv.url, alice, "GET", "/v1/me/usage", nil, 200).json(t)
	today := usage["today"].(map[string]any)
	models := today["models"].([]any)
	if today["tokens"] != view["spend"].(map[string]any)["tokens"] || len(models) != 1 || models[0].(map[string]any)["model"] != "tiny" || today["usd"].(float64) <= 0 {
		t.Fatalf("usage = %v; session spend %v", usage, view["spend"])
	}
	if usage["month"].(map[string]any)["tokens"] != today["tokens"] {
		t.Fatalf("month = %v, today = %v", usage["month"], today)
	}

	// A user's budget: only an admin sets it; bad ones are 400 and change nothing.
	must(t, srv.url, bob, "PUT", "/v1/users/bob/budget", map[string]any{"day": map[string]any{"tokens": 1}}, 403)
	must(t, srv.url, alice, "PUT", "/v1/users/bob/budget", map[string]any{"day": map[string]any{"tokens": -5}}, 400)
	must(t, srv.url, alice, "PUT", "/v1/users/bob/budget", map[string]any{"day": map[string]any{"tokens": "x"}}, 400)
	must(t, srv.url, alice, "PUT", "/v1/users/bob/budget", map[string]any{"week": map[string]any{"tokens": 5}}, 400)
	must(t, srv.url, alice, "PUT", "/v1/users/nobody/budget", map[string]any{"day": map[string]any{"tokens": 5}}, 404)
	if got := string(must(t, srv.url, alice, "GET", "/v1/users/bob/budget", nil, 200).body); strings.TrimSpace(got) != "{}" {
		t.Fatalf("bob's budget after bad puts = %s", got)
	}
	must(t, srv.url, alice, "PUT", "/v1/users/bob/budget", map[string]any{"day": map[string]any{"tokens": 1, "on_exceed": "fail"}}, 200)
	bs := must(t, srv.url, bob, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	br := must(t, srv.url, bob, "POST", "/v1/sessions/"+bs+"/runs", map[string]any{"message": "Write a haiku about the sea"}, 202).json(t)["id"].(string)
	failed := waitRun(t, srv, bob, br)
	if failed["status"] != "failed" || !strings.Contains(failed["error"].(string), "budget exceeded: the user's budget for") || failed["budget_stop"].(map[string]any)["scope"] != "user_day" {
		t.Fatalf("bob's run = %v", failed)
	}
	bu := must(t, srv.url, bob, "GET", "/v1/me/usage", nil, 200).json(t)
	if bu["budget"].(map[string]any)["day"].(map[string]any)["tokens"] != 1.0 || bu["user_id"] == usage["user_id"] {
		t.Fatalf("bob's usage = %v", bu)
	}

	metrics := string(must(t, srv.url, "", "GET", "/metrics", nil, 200).body)
	for _, want := range []string{
		`carryon_spend_tokens_total{model="tiny",type="input"}`,
		`carryon_spend_usd_total{model="tiny"}`,
		`carryon_budget_stops_total{on_exceed="fail",scope="user_day"} 1`,
		`carryon_budget_stops_total{on_exceed="pause",scope="session"} 2`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	b, _ := json.Marshal(usage)
	if strings.Contains(metrics, fmt.Sprint(usage["user_id"])) {
		t.Errorf("/metrics names a user id (%s)", b)
	}
}

// TestBudgetTwoInstancesPostgres runs one user's sessions on two server processes over one
// PostgreSQL database, each session a run after another until a run stops at the user's day
// budget, with a model slow enough that the sessions' calls overlap. The budget is exceeded by at
// most one run's worth (a run makes two model calls here, so that is more than one call, which is
// the bound budget holds give), where without holds every session's call in progress at the
// crossing would add to it.
func TestBudgetTwoInstancesPostgres(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "agents.yaml")
	slow := strings.Replace(budgetAgents, "{kind: scripted}", "{kind: scripted, delay: 40ms}", 1)
	if err := os.WriteFile(file, []byte(slow), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startCluster(t, 2, nil, []string{"--agents", file}, []string{"--agents", file})
	admin := c.key
	me := must(t, c.srvs[0].url, admin, "GET", "/v1/me", nil, 200).json(t)["id"].(string)

	// What one run costs, on a user without a budget.
	bob := must(t, c.srvs[0].url, admin, "POST", "/v1/users", map[string]any{"name": "bob"}, 201).json(t)["key"].(string)
	bs := must(t, c.srvs[0].url, bob, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	br := must(t, c.srvs[0].url, bob, "POST", "/v1/sessions/"+bs+"/runs", map[string]any{"message": "Write a haiku about the sea"}, 202).json(t)["id"].(string)
	if r := waitRun(t, c.srvs[0], bob, br); r["status"] != "succeeded" {
		t.Fatalf("bob's run = %v", r)
	}
	perRun := must(t, c.srvs[0].url, bob, "GET", "/v1/me/usage", nil, 200).json(t)["today"].(map[string]any)["tokens"].(float64)
	limit := 8 * perRun
	must(t, c.srvs[1].url, admin, "PUT", "/v1/users/"+me+"/budget", map[string]any{"day": map[string]any{"tokens": int64(limit)}}, 200)

	const sessions, maxRuns = 8, 30
	var wg sync.WaitGroup
	var mu sync.Mutex
	maxUsage := 0.0
	for i := range sessions {
		srv := c.srvs[i%2]
		wg.Go(func() {
			id := must(t, srv.url, admin, "POST", "/v1/sessions", map[string]any{"title": fmt.Sprint("s", i)}, 201).json(t)["id"].(string)
			for n := 0; n < maxRuns; n++ {
				r, err := do(srv.url, admin, "POST", "/v1/sessions/"+id+"/runs", map[string]any{"message": "Write a haiku about the sea"})
				if err != nil || r.status != 202 {
					t.Errorf("start a run: %v %d %s", err, r.status, r.body)
					return
				}
				var started map[string]any
				_ = json.Unmarshal(r.body, &started)
				run := waitRun(t, srv, admin, started["id"].(string))
				u := run["usage"].(map[string]any)
				mu.Lock()
				maxUsage = max(maxUsage, u["input_tokens"].(float64)+u["output_tokens"].(float64))
				mu.Unlock()
				switch {
				case run["status"] == "waiting_approval" && run["budget_stop"] != nil:
					return
				case run["status"] != "succeeded":
					t.Errorf("run = %v", run)
					return
				}
			}
			t.Errorf("session %s ran %d runs and no budget stopped it", id, maxRuns)
		})
	}
	wg.Wait()
	spent := must(t, c.srvs[0].url, admin, "GET", "/v1/me/usage", nil, 200).json(t)["today"].(map[string]any)["tokens"].(float64)
	if spent < limit {
		t.Fatalf("every session stopped at the budget with %v of %v tokens spent", spent, limit)
	}
	if bound := limit + maxUsage; spent > bound {
		t.Fatalf("spent %v tokens against a day budget of %v: more than one run's worth (%v) over it", spent, limit, maxUsage)
	}
	t.Logf("day budget %v tokens, spent %v (a run costs up to %v tokens)", limit, spent, maxUsage)
}
