package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/failpoint"
	"github.com/carryon-hub/carryon/internal/tool/testtools"
	"github.com/chromedp/chromedp"
)

// TestInspectorTimeline: a summary says which messages it covers; deleting a message from the
// page asks first (Cancel keeps it), then leaves a tombstone in the timeline and nothing of its
// content on the page or in the API; a refused delete (closed session) shows the problem. Tab
// walks the page in reading order, and the page fits a phone's width without scrolling sideways.
func TestInspectorTimeline(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "timeline"}, 201).json(t)["id"].(string)
	must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/messages", map[string]any{"messages": []any{
		map[string]any{"role": "user", "content": "we meet at noon"},
		map[string]any{"role": "user", "content": "my password is hunter2"},
		map[string]any{"role": "assistant", "content": "noted"},
	}}, 201)
	must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/messages", map[string]any{"messages": []any{
		map[string]any{"role": "system", "kind": "summary", "covers_from": 1, "covers_to": 3, "content": "They meet at noon."},
	}}, 201)

	p := newBrowserPage(t, srv.url)
	p.signIn(key)
	p.do("open the session", chromedp.Navigate(srv.url+"/ui/#/s/"+sid), chromedp.WaitVisible(chromedp.CSS(`article[aria-label="Message 4 (summary)"]`)))
	if got := p.eval(`document.querySelector('article[aria-label="Message 4 (summary)"]').textContent`); !strings.Contains(got, "summary of messages #1–#3") || !strings.Contains(got, "They meet at noon.") {
		t.Fatalf("the summary shows %q", got)
	}
	p.check("timeline")

	msg2 := `//article[@aria-label="Message 2 (user)"]`
	p.do("delete, then think again", chromedp.Click(msg2+`//button[normalize-space()="Delete message"]`),
		chromedp.Click(msg2+`//button[normalize-space()="Cancel"]`))
	must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/messages", nil, 200)
	if n := must(t, srv.url, key, "GET", "/v1/sessions/"+sid, nil, 200).json(t)["message_count"]; n != 4.0 {
		t.Fatalf("after Cancel the session has %v messages", n)
	}
	p.do("delete message 2", chromedp.Click(msg2+`//button[normalize-space()="Delete message"]`),
		chromedp.Click(msg2+`//button[normalize-space()="Yes, delete message"]`))
	p.until("the tombstone", `document.querySelector('article[aria-label="Message 2 (deleted)"]')?.textContent.includes('deleted at version 4') && document.querySelector('#session-version').textContent === '4'`)
	p.check("tombstone")
	if strings.Contains(p.eval(`document.body.textContent`), "hunter2") {
		t.Fatal("the page still shows the deleted message's content")
	}
	if body := string(must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/messages?include_deleted=true", nil, 200).body); strings.Contains(body, "hunter2") || !strings.Contains(body, `"deleted":true`) {
		t.Fatalf("after the delete the API lists %s", body)
	}

	// A delete the API refuses: the session was closed meanwhile.
	p.allowConsole(`status of 409 .*/messages/1$`)
	must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/close", nil, 200)
	msg1 := `//article[@aria-label="Message 1 (user)"]`
	p.do("delete message 1", chromedp.Click(msg1+`//button[normalize-space()="Delete message"]`),
		chromedp.Click(msg1+`//button[normalize-space()="Yes, delete message"]`))
	p.until("the refusal", `document.querySelector('article[aria-label="Message 1 (user)"] [role=alert]')?.textContent.includes('session_closed')`)
	p.check("delete-refused")

	// Keyboard: after a view change the focus is on its heading; Tab then walks the controls in
	// reading order, from the session's first control on.
	p.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`article[aria-label="Message 2 (deleted)"]`)))
	p.until("the focused heading", `document.activeElement === document.querySelector('h1')`)
	p.do("start", chromedp.Evaluate[chromedp.Void](`window.seen = []`))
	for range 12 {
		p.do("tab", chromedp.KeyEvent("\t"), chromedp.Evaluate[chromedp.Void](`window.seen.push(document.activeElement)`))
	}
	if got := p.eval(`window.seen[0].textContent`); got != "Restore session" {
		t.Fatalf("Tab from the heading focuses %q, want the first control, Restore session", got)
	}
	if bad := p.eval(`window.seen.slice(1).map((el, i) => (window.seen[i].compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) ? '' : el.outerHTML.slice(0, 80)).join('')`); bad != "" {
		t.Fatalf("Tab went back in the document to %s", bad)
	}

	// A phone's width: one column, nothing wider than the screen.
	p.do("phone width", chromedp.EmulateViewport(390, 844))
	if got := p.eval(`String(document.documentElement.scrollWidth)`); got != "390" {
		t.Fatalf("at 390 px the page is %s px wide", got)
	}
	if got := p.eval(`getComputedStyle(document.querySelector('.grid')).gridTemplateColumns`); strings.Contains(got, " ") {
		t.Fatalf("at 390 px the session page has columns %q, want one", got)
	}
	p.check("timeline-phone")
}

// TestInspectorCrashDecision: the page starts a run whose unsafe tool call is cut off by a crash
// (the server kills itself after journaling it started); after the restart the page shows the
// call with what is known (its journal status, arguments, idempotency key) and the three choices,
// and each lets the run finish: "Run it again" runs the tool once, "Mark done" (with a result the
// model is told) and "Skip" run nothing. The run in the timeline then says its attempt,
// takeovers and usage.
func TestInspectorCrashDecision(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	for _, c := range []struct {
		button, result string // the choice, and what the model is told of the call
		lines          int    // the tool's effects after it
	}{
		{"Run it again", "", 1},
		{"Mark done", "logged by hand", 0},
		{"Skip", "skipped by the user", 0},
	} {
		t.Run(strings.ReplaceAll(c.button, " ", "_"), func(t *testing.T) {
			t.Parallel()
			crashDecision(t, c.button, c.result, c.lines)
		})
	}
}

func crashDecision(t *testing.T, button, result string, lines int) {
	data := t.TempDir()
	addr := fixedAddr(t)
	env := []string{"CARRYON_TEST_TOOLS=1"}
	srv := startServerEnv(t, data, append(env, "CARRYON_FAILPOINT="+failpoint.ActionStarted+"@3"), "--addr", addr, "--lease-ttl", "1s")
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "release"}, 201).json(t)["id"].(string)
	p := newBrowserPage(t, srv.url)
	p.signIn(key)
	p.do("open the session", chromedp.Navigate(srv.url+"/ui/#/s/"+sid), chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)))
	p.do("send the task", chromedp.SetValue(chromedp.CSS(`textarea[name=message]`), "New task: log the release\n/tool test_append {\"text\":\"released\"}"),
		chromedp.Click(`//button[normalize-space()="Send"]`))
	p.allowConsole(`net::ERR_[A-Z_]+ `) // the page streams from the crashed server
	waitExit(t, srv)

	srv = startServerEnv(t, data, env, "--addr", addr, "--lease-ttl", "1s")
	p.do("reload", chromedp.Reload())
	card := `section[aria-label="Action test_append"]`
	p.until("the decision", `document.querySelector('`+card+`')?.textContent.includes('cut off by a crash: started') && document.querySelector('#run-status')?.textContent === 'waiting_approval'`)
	got := p.eval(`document.querySelector('` + card + `').textContent`)
	for _, want := range []string{"unsafe", `"released"`, "idempotency key run_", "Run it again", "Mark done", "Skip"} {
		if !strings.Contains(got, want) {
			t.Fatalf("the decision card shows %q, without %q", got, want)
		}
	}
	p.check("crash-decision")
	if button == "Mark done" {
		p.do("the result", chromedp.SendKeys(chromedp.CSS(`input[name=mark-done-result]`), result))
	}
	p.click(button)
	p.until("the run to finish", `document.querySelector('#run-status')?.textContent === 'succeeded'`)

	runs := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/runs", nil, 200).json(t)["items"].([]any)
	run := runs[0].(map[string]any)
	if run["status"] != "succeeded" {
		t.Fatalf("after %s the run is %v", button, run)
	}
	if got, _ := testtools.ReadLines(filepath.Join(data, "workspaces", sid, testtools.AppendFile)); len(got) != lines {
		t.Fatalf("after %s append.log has %v, want %d lines", button, got, lines)
	}
	if page := string(must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/messages", nil, 200).body); !strings.Contains(page, result) {
		t.Fatalf("after %s the model was not told %q: %s", button, result, page)
	}
	u := run["usage"].(map[string]any)
	want := fmt.Sprintf("attempt %v (taken over %v× after a crash) · usage %v in / %v out tokens", run["attempt"], run["takeovers"], u["input_tokens"], u["output_tokens"])
	p.until("the run in the timeline", `[...document.querySelectorAll('#timeline details.run summary')].some((s) => s.textContent.includes(`+jsString(want)+`))`)
	p.check("crash-decided")
}

// TestInspectorCompactionMarker: a compaction made with POST /compact heads its summary in the
// timeline with what it covers, the context's tokens before and after, the model and the
// instructions; a summary a client stored itself says it has no compaction record.
func TestInspectorCompactionMarker(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "compacted"}, 201).json(t)["id"].(string)
	must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/messages", map[string]any{"messages": []any{
		map[string]any{"role": "user", "content": "the plan is ZEBRA, we leave at dawn"},
		map[string]any{"role": "assistant", "content": "noted: ZEBRA at dawn"},
		map[string]any{"role": "user", "content": "and bring the maps"},
	}}, 201)
	c := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/compact", map[string]any{"keep_last": 1, "instructions": "keep the code word"}, 201).json(t)
	before, after := int(c["tokens_before"].(float64)), int(c["tokens_after"].(float64))
	must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/messages", map[string]any{"messages": []any{
		map[string]any{"role": "system", "kind": "summary", "covers_from": 1, "covers_to": 3, "content": "A client's own summary."},
	}}, 201)

	p := newBrowserPage(t, srv.url)
	p.signIn(key)
	marker := fmt.Sprintf(`[role=note][aria-label="Compaction of messages #%v–#%v"]`, c["covers_from"], c["covers_to"])
	p.do("open the session", chromedp.Navigate(srv.url+"/ui/#/s/"+sid), chromedp.WaitVisible(chromedp.CSS(marker)))
	got := p.eval(`document.querySelector('` + marker + `').textContent`)
	for _, want := range []string{fmt.Sprintf("context %d → %d tokens", before, after), "by scripted", "Asked to keep: keep the code word"} {
		if !strings.Contains(got, want) {
			t.Errorf("the compaction marker says %q, want %q in it", got, want)
		}
	}
	if summary := p.eval(`document.querySelector('article[aria-label="Message ` + fmt.Sprint(c["seq"]) + ` (summary)"]').textContent`); !strings.Contains(summary, c["summary"].(string)) {
		t.Errorf("the compaction's summary message shows %q, want its text %q", summary, c["summary"])
	}
	if own := p.eval(`document.querySelector('[role=note][aria-label="Compaction of messages #1–#3"]')?.textContent ?? ''`); !strings.Contains(own, "no compaction record") {
		t.Errorf("a client's own summary is marked %q", own)
	}
	p.check("compaction")
}
