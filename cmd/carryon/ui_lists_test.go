package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestInspectorLists: the sessions list pages 25 at a time (Load more), shows each session's
// goal and next action, filters by status, and its search box asks the server (GET
// /v1/sessions?q=): it finds sessions on a page not loaded yet by their titles, and a session by
// a word only one of its messages holds; long-term memory is grouped by namespace and filters by
// one.
func TestInspectorLists(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	ids := map[int]string{}
	for i := 1; i <= 30; i++ {
		body := map[string]any{"title": fmt.Sprintf("trip %d", i)}
		if i == 30 {
			body["working_memory"] = map[string]any{"goal": "see the sea", "next_action": "book the train"}
		}
		ids[i] = must(t, srv.url, key, "POST", "/v1/sessions", body, 201).json(t)["id"].(string)
	}
	must(t, srv.url, key, "POST", "/v1/sessions/"+ids[5]+"/messages",
		map[string]any{"messages": []map[string]any{{"role": "user", "content": "Ask the lighthouse keeper about the ferry."}}}, 201)
	for _, i := range []int{3, 28} {
		must(t, srv.url, key, "POST", "/v1/sessions/"+ids[i]+"/close", nil, 200)
	}
	must(t, srv.url, key, "PUT", "/v1/memories/prefs/editor", map[string]any{"value": "vim"}, 200)
	must(t, srv.url, key, "PUT", "/v1/memories/travel/seat", map[string]any{"value": "window"}, 200)
	must(t, srv.url, key, "PUT", "/v1/memories/travel/meal", map[string]any{"value": "vegetarian"}, 200)

	p := newBrowserPage(t, srv.url)
	p.signIn(key)
	titles := `[...document.querySelectorAll('table tbody tr td:first-child')].map((td) => td.textContent).join(',')`
	p.until("the first page", `document.querySelectorAll('table tbody tr').length === 25 && document.querySelector('[data-state]')?.dataset.state === '||more'`)
	if got := p.eval(`document.querySelector('table tbody tr').textContent`); !strings.Contains(got, "trip 30") || !strings.Contains(got, "see the sea") || !strings.Contains(got, "book the train") {
		t.Fatalf("the newest session's row is %q, want its title, goal and next action", got)
	}
	p.check("sessions-page-1")
	p.click("Load more")
	p.until("the second page", `document.querySelectorAll('table tbody tr').length === 30 && document.querySelector('[data-state]').dataset.state === '||all'`)
	if got := p.eval(titles); !strings.HasSuffix(got, "trip 2,trip 1") {
		t.Fatalf("after Load more the list is %s", got)
	}

	p.do("closed ones", chromedp.SetValue(`//label[starts-with(normalize-space(),"Status")]/select`, "closed"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('label select').dispatchEvent(new Event('change'))`))
	p.until("the closed sessions", `document.querySelector('[data-state]').dataset.state === '|closed|all' && `+titles+` === 'trip 28,trip 3'`)
	p.check("sessions-closed")

	// A fresh list has the first page only; the search finds the titles with "trip" and "2" (the
	// server's words: "trip 12" too), those of the second page included.
	p.do("reload", chromedp.Reload())
	p.until("the first page again", `document.querySelector('[data-state]')?.dataset.state === '||more'`)
	p.do("search", chromedp.SendKeys(chromedp.CSS(`input[name=q]`), "trip 2"))
	p.until("the search result", `document.querySelector('[data-state]').dataset.state === 'trip 2||all'`)
	if got := p.eval(titles); got != "trip 29,trip 28,trip 27,trip 26,trip 25,trip 24,trip 23,trip 22,trip 21,trip 20,trip 12,trip 2" {
		t.Fatalf("searching \"trip 2\" shows %s", got)
	}
	p.check("sessions-search")
	// A word that only a message of "trip 5" holds (no title has it) lists that session alone,
	// a prefix of it too.
	p.do("search a message", chromedp.Evaluate[chromedp.Void](`document.querySelector("input[name=q]").value = ""`), chromedp.SendKeys(chromedp.CSS(`input[name=q]`), "lighthou"))
	p.until("the message's session", `document.querySelector('[data-state]').dataset.state === 'lighthou||all'`)
	if got := p.eval(titles); got != "trip 5" {
		t.Fatalf("searching \"lighthou\" shows %q, want trip 5 only", got)
	}

	p.do("long-term memory", chromedp.Navigate(srv.url+"/ui/#/memories"))
	p.until("the namespaces", `[...document.querySelectorAll('section.namespace > h2')].map((h) => h.textContent).join(',') === 'Namespace prefs · 1 item,Namespace travel · 2 items'`)
	p.check("memories-by-namespace")
	p.do("one namespace", chromedp.SendKeys(`//label[starts-with(normalize-space(),"Namespace (empty: all)")]/input`, "travel"),
		chromedp.Click(`//button[normalize-space()="Show"]`))
	p.until("its items", `[...document.querySelectorAll('section.card h3')].map((h) => h.textContent).join(',') === 'travel/meal,travel/seat'`)
}
