package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestInspectorFacts: the session page's "Learn facts now" has the session's profile learn from
// its new turns and lists each fact, new or consolidated; a second press finds no new turns.
func TestInspectorFacts(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	llm := newFakeProvider(t, `{"facts": ["Is vegetarian.", "Lives in Lisbon."]}`)
	file := writeFile(t, t.TempDir(), "agents.yaml", `
providers:
  fake: {kind: openai, base_url: "`+llm.URL+`/v1"}
agents:
  default: {provider: fake, model: m1, memory_extraction: {namespace: learned, idle_after: 0s}}
`)
	srv := startServer(t, t.TempDir(), "--agents", file)
	key := localKey(t, srv.data)
	id := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "facts"}, 201).json(t)["id"].(string)
	must(t, srv.url, key, "POST", "/v1/sessions/"+id+"/messages", map[string]any{"messages": []map[string]string{
		{"role": "user", "content": "I'm vegetarian and I live in Lisbon."}, {"role": "assistant", "content": "Noted."}}}, 201)

	p := newBrowserPage(t, srv.url)
	p.signIn(key)
	learn := `//section[@aria-labelledby="facts-title"]//button[normalize-space()="Learn facts now"]`
	p.do("open the session", chromedp.Navigate(srv.url+"/ui/#/s/"+id), chromedp.WaitVisible(learn))
	// The click lands where the button is: wait for the sections above it to be drawn.
	p.until("the page drawn", `!!document.querySelector('#session-spent') && !document.querySelector('[aria-busy="true"]')`)
	p.do("learn", chromedp.Click(learn))
	p.until("the facts", `document.querySelectorAll('ul[aria-label="Facts learned"] li').length === 2`)
	got := p.eval(`document.querySelector('#facts-out').textContent`)
	for _, want := range []string{"Read messages #1–#2 into the namespace learned: 2 facts.", "Is vegetarian. · new", "Lives in Lisbon. · new"} {
		if !strings.Contains(got, want) {
			t.Errorf("the facts say %q, want %q in it", got, want)
		}
	}
	p.check("facts")
	if n := len(must(t, srv.url, key, "GET", "/v1/memories?namespace=learned", nil, 200).json(t)["items"].([]any)); n != 2 {
		t.Fatalf("%d items learned, want 2", n)
	}
	p.do("learn again", chromedp.Click(learn))
	p.until("nothing new", `document.querySelector('#facts-out').textContent.includes('No new turns since the last time')`)
	if n := len(llm.requests()); n != 1 {
		t.Fatalf("%d model calls, want 1: the second press had no new turns", n)
	}
}
