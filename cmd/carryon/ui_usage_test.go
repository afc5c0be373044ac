package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// spendLayoutJS is overflowJS plus the spend's own boxes: the chart, the budget lines and the
// usage page's tables, none wider than the screen nor than their box.
const spendLayoutJS = `(() => {
  const bad = [` + overflowJS + `].filter((s) => s);
  for (const el of document.querySelectorAll('.days-chart, .days-chart *, #session-spend p, .budget-stop, main table td, main table th')) {
    if (!el.getBoundingClientRect().width) continue;
    const r = el.getBoundingClientRect();
    const name = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' "' + el.textContent.slice(0, 30) + '"';
    if (r.right > innerWidth + 1) bad.push(name + ' ends at ' + Math.round(r.right));
    if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth) bad.push(name + ' is ' + el.scrollWidth + ' px wide in ' + el.clientWidth);
  }
  return bad.join('\n');
})()`

// TestInspectorSpend: a session page shows the session's spend and budget and its tokens per day
// (an SVG bar a day, today's as tall as what was spent, a USD line since the model is priced);
// a run stopped at the session's budget says what was spent and the limit; the Usage page shows
// today's and this month's spend against the user's budgets, the days and the models. Both pages
// pass axe-core and fit 1280 and 390 px. An admin shows another user's usage and budgets there.
func TestInspectorSpend(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	data := t.TempDir()
	file := filepath.Join(data, "agents.yaml")
	if err := os.WriteFile(file, []byte(budgetAgents), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, data, "--agents", file)
	key := localKey(t, data)
	me := must(t, srv.url, key, "GET", "/v1/me", nil, 200).json(t)["id"].(string)
	must(t, srv.url, key, "PUT", "/v1/users/"+me+"/budget", map[string]any{"day": map[string]any{"tokens": 1000000}, "month": map[string]any{"usd": 50, "on_exceed": "fail"}}, 200)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "spend", "budget": map[string]any{"tokens": 1}}, 201).json(t)["id"].(string)
	runID := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "Write a haiku about the sea"}, 202).json(t)["id"].(string)
	run := waitRun(t, srv, key, runID)
	if run["budget_stop"] == nil {
		t.Fatalf("run = %v, want a budget stop", run)
	}
	spent := int64(run["budget_stop"].(map[string]any)["spent"].(map[string]any)["tokens"].(float64))

	p := newBrowserPage(t, srv.url)
	p.signIn(key)
	p.do("open the run", chromedp.Navigate(srv.url+"/ui/#/s/"+sid+"/"+runID))
	p.until("the spend and the stop", `!!document.querySelector('#session-spent') && document.querySelectorAll('#session-spend .dc-bar').length === 30 && !!document.querySelector('#run-`+runID+` .budget-stop')`)
	if got := p.eval(`document.querySelector('#session-budget').textContent`); got != "1 tokens, then pause" {
		t.Errorf("session budget = %q", got)
	}
	if got := p.eval(`document.querySelector('#session-spent').textContent`); !strings.Contains(got, " tokens, $") || !strings.Contains(got, "% of the tokens") {
		t.Errorf("session spent = %q", got)
	}
	if got := p.eval(`[...document.querySelectorAll('#session-spend .dc-bar')].map((r) => r.dataset.tokens).join(',')`); got != strings.Repeat("0,", 29)+strconv.FormatInt(spent, 10) {
		t.Errorf("bars = %s, want 29 zeros then %d", got, spent)
	}
	if p.eval(`String(!!document.querySelector('#session-spend polyline.dc-usd'))`) != "true" {
		t.Error("no USD line on a priced model's chart")
	}
	if got := p.eval(`document.querySelector('#run-` + runID + ` .budget-stop').textContent`); !strings.Contains(got, "the session's budget") || !strings.Contains(got, "spent "+commas(spent)+" tokens") || !strings.Contains(got, "of 1 tokens, then pause") {
		t.Errorf("budget stop = %q", got)
	}
	fits(t, p, "session")

	p.do("open the usage page", chromedp.Navigate(srv.url+"/ui/#/usage"))
	p.until("the usage page", `document.title.startsWith('Usage') && document.querySelectorAll('.days-chart .dc-bar').length === 30 && !!document.querySelector('#usage-month')`)
	if got := p.eval(`document.querySelector('#usage-today').textContent`); !strings.Contains(got, commas(spent)+" tokens") || !strings.Contains(got, "1,000,000 tokens, then pause") {
		t.Errorf("today = %q", got)
	}
	if got := p.eval(`document.querySelector('#usage-month').textContent`); !strings.Contains(got, "$50.00, then fail") || !strings.Contains(got, "% of the USD") {
		t.Errorf("month = %q", got)
	}
	if got := p.eval(`document.querySelector('[aria-label="Your runs: spend per model this month"] tbody').textContent`); !strings.HasPrefix(got, "tiny") {
		t.Errorf("models = %q", got)
	}
	if got := p.eval(`document.querySelector('.days-chart svg').getAttribute('aria-label')`); !strings.Contains(got, "in 30 days") {
		t.Errorf("chart label = %q", got)
	}
	fits(t, p, "usage")

	// An admin shows another user's usage and budgets.
	bob := addUser(t, data, "bob")
	bobID := must(t, srv.url, bob, "GET", "/v1/me", nil, 200).json(t)["id"].(string)
	must(t, srv.url, key, "PUT", "/v1/users/"+bobID+"/budget", map[string]any{"month": map[string]any{"tokens": 2500}}, 200)
	p.do("show bob's usage", chromedp.SendKeys(chromedp.CSS(`input[name=user]`), "bob"), chromedp.Click(`//button[normalize-space()="Show"]`))
	p.until("bob's usage", `!!document.querySelector('#other-month') && document.querySelectorAll('#other-usage .dc-bar').length === 30`)
	if got := p.eval(`document.querySelector('#other-month').textContent + ' | ' + document.querySelector('#other-today').textContent`); !strings.Contains(got, "0 tokens, $0.00 (0% of the tokens)2,500 tokens, then pause") || !strings.Contains(got, "| Today") || !strings.HasSuffix(got, "none") {
		t.Errorf("bob's usage = %q", got)
	}
	fits(t, p, "usage-other")
	p.allowConsole(`404`)
	p.do("show nobody's usage", chromedp.SetValue(chromedp.CSS(`input[name=user]`), "nobody"), chromedp.Click(`//button[normalize-space()="Show"]`))
	p.until("a 404", `!!document.querySelector('#other-usage [role=alert]')`)
}

// fits checks the page at 1280 and 390 px: axe-core, and nothing wider than the screen or its box.
func fits(t *testing.T, p *browserPage, name string) {
	t.Helper()
	for _, w := range []struct {
		name          string
		width, height int64
	}{{"desktop", 1280, 800}, {"phone", 390, 844}} {
		p.do(w.name, chromedp.EmulateViewport(w.width, w.height))
		if bad := p.eval(spendLayoutJS); bad != "" {
			p.shot(name + "-" + w.name)
			t.Fatalf("%s at %d px:\n%s", name, w.width, bad)
		}
		p.check(name + "-" + w.name)
	}
}
