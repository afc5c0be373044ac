package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/client"
)

// TestUsagePerDay reads spend per UTC day through a real server with priced models: the caller's
// days (GET /v1/me/usage?days=N, every day present, zeros included), an admin's view of another
// user, a session's days and budget (GET /v1/sessions/{id}/usage) and its fork's (none of the
// parent's), bad days as 400 problems, a deleted session's usage gone while the user's stays; and
// the same through the Go client and carryon usage.
func TestUsagePerDay(t *testing.T) {
	t.Parallel()
	srv, data := startBudgetServer(t)
	alice := localKey(t, data)
	bob := addUser(t, data, "bob")

	sess := must(t, srv.url, alice, "POST", "/v1/sessions", map[string]any{"title": "spent", "budget": map[string]any{"usd": 100, "tokens": 1000000}}, 201).json(t)
	id := sess["id"].(string)
	runID := must(t, srv.url, alice, "POST", "/v1/sessions/"+id+"/runs", map[string]any{"message": "Write a haiku about the sea"}, 202).json(t)["id"].(string)
	if run := waitRun(t, srv, alice, runID); run["status"] != "succeeded" {
		t.Fatalf("run = %v", run)
	}
	today := carryon.Day(time.Now())
	spend := must(t, srv.url, alice, "GET", "/v1/sessions/"+id, nil, 200).json(t)["spend"].(map[string]any)
	if spend["tokens"].(float64) <= 0 || spend["usd"].(float64) <= 0 {
		t.Fatalf("session spend = %v", spend)
	}

	// The caller's days: three of them, today last and the only one with spend.
	u := must(t, srv.url, alice, "GET", "/v1/me/usage?days=3", nil, 200).json(t)
	days := u["days"].([]any)
	if len(days) != 3 {
		t.Fatalf("days = %v, want 3", days)
	}
	last := days[2].(map[string]any)
	if last["date"] != today || last["tokens"] != spend["tokens"] || last["usd"] != spend["usd"] || last["calls"].(float64) < 1 ||
		last["input_tokens"].(float64)+last["output_tokens"].(float64) != last["tokens"] {
		t.Fatalf("today = %v, session spend %v", last, spend)
	}
	for _, d := range days[:2] {
		if d := d.(map[string]any); d["tokens"] != 0.0 || d["usd"] != 0.0 || d["calls"] != 0.0 || d["date"].(string) >= today {
			t.Fatalf("an earlier day = %v", d)
		}
	}
	if n := len(must(t, srv.url, alice, "GET", "/v1/me/usage", nil, 200).json(t)["days"].([]any)); n != carryon.DefaultUsageDays {
		t.Fatalf("default days = %d", n)
	}
	for _, bad := range []string{"0", "367", "-1", "a", "1.5"} {
		for _, path := range []string{"/v1/me/usage", "/v1/sessions/" + id + "/usage", "/v1/users/bob/usage"} {
			r := must(t, srv.url, alice, "GET", path+"?days="+bad, nil, 400)
			if !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") || !strings.Contains(string(r.body), "days") {
				t.Fatalf("%s?days=%s: %s %s", path, bad, r.header.Get("Content-Type"), r.body)
			}
		}
	}

	// An admin's view of another user; a user's of another is forbidden.
	bobID := must(t, srv.url, bob, "GET", "/v1/me", nil, 200).json(t)["id"].(string)
	bu := must(t, srv.url, alice, "GET", "/v1/users/bob/usage?days=2", nil, 200).json(t)
	if bu["user_id"] != bobID || len(bu["days"].([]any)) != 2 || bu["today"].(map[string]any)["tokens"] != 0.0 {
		t.Fatalf("bob's usage = %v", bu)
	}
	must(t, srv.url, bob, "GET", "/v1/users/"+sess["owner_id"].(string)+"/usage", nil, 403)
	must(t, srv.url, alice, "GET", "/v1/users/nobody/usage", nil, 404)

	// The session's days and budget; another user's view is 404.
	su := must(t, srv.url, alice, "GET", "/v1/sessions/"+id+"/usage?days=2", nil, 200).json(t)
	sdays := su["days"].([]any)
	models := su["models"].([]any)
	if su["session_id"] != id || len(sdays) != 2 || sdays[1].(map[string]any)["tokens"] != spend["tokens"] || sdays[0].(map[string]any)["tokens"] != 0.0 ||
		su["spend"].(map[string]any)["tokens"] != spend["tokens"] || len(models) != 1 || models[0].(map[string]any)["model"] != "tiny" ||
		su["budget"].(map[string]any)["usd"] != 100.0 {
		t.Fatalf("session usage = %v", su)
	}
	must(t, srv.url, bob, "GET", "/v1/sessions/"+id+"/usage", nil, 404)

	// A fork has spent nothing of its own.
	fork := must(t, srv.url, alice, "POST", "/v1/sessions/"+id+"/fork", map[string]any{}, 201).json(t)["id"].(string)
	fu := must(t, srv.url, alice, "GET", "/v1/sessions/"+fork+"/usage?days=1", nil, 200).json(t)
	if fu["spend"].(map[string]any)["tokens"] != 0.0 || fu["days"].([]any)[0].(map[string]any)["tokens"] != 0.0 || len(fu["models"].([]any)) != 0 {
		t.Fatalf("fork's usage = %v", fu)
	}

	// The Go client reads the same.
	c := client.New(srv.url, alice)
	ctx := context.Background()
	cu, err := c.Usage(ctx, carryon.UsageOptions{Days: 3})
	if err != nil || len(cu.Days) != 3 || cu.Days[2].Date != today || float64(cu.Days[2].Tokens) != spend["tokens"] || cu.Budget.Day != nil {
		t.Fatalf("client usage = %+v, %v", cu, err)
	}
	cs, err := c.SessionUsage(ctx, id, carryon.UsageOptions{})
	if err != nil || len(cs.Days) != carryon.DefaultUsageDays || cs.Budget == nil || *cs.Budget.USD != 100 || cs.Spend.USD != spend["usd"] {
		t.Fatalf("client session usage = %+v, %v", cs, err)
	}
	if _, err := c.Usage(ctx, carryon.UsageOptions{Days: 400}); carryon.ErrorCode(err) != carryon.EINVALID {
		t.Fatalf("client usage of 400 days: %v", err)
	}
	day := int64(50)
	set, err := c.SetUserBudget(ctx, "bob", carryon.UserBudgetInput{UserBudget: carryon.UserBudget{Day: &carryon.Budget{Tokens: &day}}})
	if err != nil || set.Day == nil || *set.Day.Tokens != 50 || set.Day.OnExceed != carryon.BudgetPause {
		t.Fatalf("client set budget = %+v, %v", set, err)
	}
	got, err := c.UserBudget(ctx, "bob")
	if err != nil || got.Day == nil || *got.Day.Tokens != 50 || got.Month != nil {
		t.Fatalf("client budget = %+v, %v", got, err)
	}
	bobUsage, err := c.UserUsage(ctx, "bob", carryon.UsageOptions{Days: 1})
	if err != nil || bobUsage.UserID != bobID || bobUsage.Budget.Day == nil || len(bobUsage.Days) != 1 {
		t.Fatalf("client user usage = %+v, %v", bobUsage, err)
	}
	if _, err := client.New(srv.url, bob).UserBudget(ctx, "bob"); carryon.ErrorCode(err) != carryon.EFORBIDDEN {
		t.Fatalf("bob reads a budget: %v", err)
	}

	// carryon usage: the caller's table, an admin's view, a session's.
	out := cli(t, srv, "usage", "--days", "2")
	if !strings.Contains(out, today) || !strings.Contains(out, "DATE") || strings.Count(out, "\n") != 6 {
		t.Fatalf("carryon usage:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if f := strings.Fields(lines[len(lines)-1]); f[0] != today || f[1] != strconv.FormatInt(int64(spend["tokens"].(float64)), 10) {
		t.Fatalf("today's row %q, tokens %v", lines[len(lines)-1], spend["tokens"])
	}
	if out := cli(t, srv, "usage", "--user", "bob", "--days", "1"); !strings.Contains(out, bobID) || !strings.Contains(out, "budget 50 tokens, then pause") {
		t.Fatalf("carryon usage --user bob:\n%s", out)
	}
	if out := cli(t, srv, "usage", "--session", id, "--days", "1"); !strings.Contains(out, id) || !strings.Contains(out, "1000000 tokens or $100, then pause") {
		t.Fatalf("carryon usage --session:\n%s", out)
	}
	var sink strings.Builder
	if err := run(ctx, []string{"usage", "--days", "0"}, envMap(map[string]string{"CARRYON_SERVER": srv.url, "CARRYON_DATA": data}), nil, &sink, &sink); err == nil {
		t.Fatal("carryon usage --days 0: no error")
	}

	// Deleting the session deletes its usage; the user's stays.
	must(t, srv.url, alice, "DELETE", "/v1/sessions/"+fork, nil, 204)
	must(t, srv.url, alice, "DELETE", "/v1/sessions/"+id, nil, 204)
	must(t, srv.url, alice, "GET", "/v1/sessions/"+id+"/usage", nil, 404)
	after := must(t, srv.url, alice, "GET", "/v1/me/usage?days=1", nil, 200).json(t)["days"].([]any)[0].(map[string]any)
	if after["tokens"] != spend["tokens"] {
		t.Fatalf("after the delete today = %v", after)
	}
}
