package main

import (
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/chromedp/chromedp"
)

// overflowJS lists what breaks the layout: a page wider than the screen, an element of the
// journal or of the memory history reaching past it, a text wider than its box (clipped or
// scrolled sideways), a table wider than its region.
const overflowJS = `(() => {
  const bad = [];
  if (document.documentElement.scrollWidth > innerWidth) {
    bad.push('the page is ' + document.documentElement.scrollWidth + ' px wide');
    for (const el of document.querySelectorAll('main *')) {
      const r = el.getBoundingClientRect();
      if (r.right > innerWidth + 1 && !(el.parentElement.getBoundingClientRect().right > innerWidth + 1)) bad.push(el.tagName.toLowerCase() + (el.className ? '.' + el.className : '') + ' ends at ' + Math.round(r.right) + ': "' + el.textContent.slice(0, 30) + '"');
    }
  }
  const sel = '#timeline li.action, #timeline li.action *, [aria-label="Memory history"] td, [aria-label="Memory history"] td *, #session-schedules td, .tablewrap';
  for (const el of document.querySelectorAll(sel)) {
    if (!el.clientWidth) continue;
    const r = el.getBoundingClientRect();
    const name = el.tagName.toLowerCase() + (el.className ? '.' + el.className : '') + ' "' + el.textContent.slice(0, 30) + '"';
    if (r.right > innerWidth + 1) bad.push(name + ' ends at ' + Math.round(r.right));
    if (el.scrollWidth > el.clientWidth + 1) bad.push(name + ' is ' + el.scrollWidth + ' px wide in ' + el.clientWidth);
  }
  return bad.join('\n');
})()`

// TestInspectorJournalLayout: an opened run says the front door it was started through; its journal is a card per call with its ids copyable
// and a long argument folded (Show all unfolds it); the journal, the memory history (with its
// run) and the schedules fit the page at 1280 px and at 390 px: nothing wider than the screen,
// no text wider than its box.
func TestInspectorJournalLayout(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	data := t.TempDir()
	srv := startServerEnv(t, data, []string{"CARRYON_TEST_TOOLS=1"})
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "layout"}, 201).json(t)["id"].(string)
	must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/schedules", map[string]any{"cron": "*/5 * * * *", "timezone": "America/Argentina/ComodRivadavia", "message": strings.Repeat("a long scheduled message ", 8)}, 201)
	long := strings.Repeat("release notes line, ", 40) + strings.Repeat("x", 300)
	run := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "New task: log the release\n/tool test_append {\"text\":\"" + long + "\"}"}, 202).json(t)
	runID := run["id"].(string)
	poll.Eventually(t, "the run to finish", func() bool {
		return must(t, srv.url, key, "GET", "/v1/runs/"+runID, nil, 200).json(t)["status"] == "succeeded"
	})

	p := newBrowserPage(t, srv.url)
	p.signIn(key)
	p.do("open the run", chromedp.Navigate(srv.url+"/ui/#/s/"+sid+"/"+runID))
	action := `[...document.querySelectorAll('#run-` + runID + ` li.action')].find((li) => li.querySelector('strong').textContent.endsWith('test_append'))`
	p.until("the journal", `!!`+action+` && !!document.querySelector('[aria-label="Memory history"]')`)
	if got := p.eval(`document.querySelector('#run-` + runID + ` .started-by')?.textContent + ' | ' + document.querySelector('#run-` + runID + ` summary').textContent`); !strings.Contains(got, "Started through the API | ") || !strings.Contains(got, "· through the API ·") {
		t.Fatalf("the run does not say it was started through the API: %q", got)
	}
	if got := p.eval(action + `.querySelector('pre').textContent`); strings.Contains(got, long) || !strings.HasSuffix(got, "…") {
		t.Fatalf("the long argument is not folded: %q", got)
	}
	p.check("journal-folded")
	p.do("show all", chromedp.Click(`//li[contains(@class,"action")][.//strong[contains(.,"test_append")]]//button[starts-with(normalize-space(),"Show all")]`))
	p.until("unfolded", action+`.querySelector('pre').textContent.includes(`+jsString(long)+`) && `+action+`.querySelector('.fold').textContent === 'Show less'`)
	if got := p.eval(`document.querySelector('[aria-label="Memory history"] tbody tr').textContent`); !strings.Contains(got, runID) {
		t.Fatalf("the memory history's newest row is %q, without its run %s", got, runID)
	}
	p.do("copy the run id", chromedp.Click(`//details[@id="run-`+runID+`"]//button[@aria-label="Copy `+runID+`"]`))
	p.until("copied", `document.getElementById('toast').textContent === 'Copied `+runID+`' || (document.getElementById('toast').textContent.startsWith('Selected') && getSelection().toString() === '`+runID+`')`)
	for _, w := range []struct {
		name          string
		width, height int64
	}{{"desktop", 1280, 800}, {"phone", 390, 844}} {
		p.do(w.name, chromedp.EmulateViewport(w.width, w.height))
		if bad := p.eval(overflowJS); bad != "" {
			p.shot("layout-" + w.name)
			t.Fatalf("at %d px:\n%s", w.width, bad)
		}
		p.check("layout-" + w.name)
	}
}
