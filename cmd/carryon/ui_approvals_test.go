package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestInspectorApprovalChoices: arguments that are not JSON are refused on the page and nothing
// is sent; "Approve with edited arguments" runs the call with the user's arguments (the journal
// keeps the model's); "Reject" with a reason tells the model and runs nothing. Opening a run in
// the timeline lists its tool calls with arguments, results and fingerprints before → after.
func TestInspectorApprovalChoices(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	file := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(file, []byte("providers:\n  offline: {kind: scripted}\nagents:\n  default:\n    provider: offline\n    approval: {write_file: always}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	srv := startServer(t, data, "--agents", file)
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "choices"}, 201).json(t)["id"].(string)
	p := newBrowserPage(t, srv.url)
	p.signIn(key)
	p.do("open the session", chromedp.Navigate(srv.url+"/ui/#/s/"+sid), chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)))
	send := func(text string) {
		t.Helper()
		p.do("send "+text, chromedp.SendKeys(chromedp.CSS(`textarea[name=message]`), text), chromedp.Click(`//button[normalize-space()="Send"]`))
	}
	card := `//section[@aria-label="Action write_file"]`
	runOf := func() map[string]any {
		return must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/runs", nil, 200).json(t)["items"].([]any)[0].(map[string]any)
	}
	actionOf := func(runID string) map[string]any {
		for _, a := range must(t, srv.url, key, "GET", "/v1/runs/"+runID+"/actions", nil, 200).json(t)["items"].([]any) {
			if a := a.(map[string]any); a["tool"] == "write_file" {
				return a
			}
		}
		t.Fatalf("run %s has no write_file call", runID)
		return nil
	}

	send(picnic)
	p.until("the approval", `document.querySelector('#run-status')?.textContent === 'waiting_approval' && !!document.querySelector('section[aria-label="Action write_file"] textarea')`)
	p.do("arguments that are not JSON", chromedp.SetValue(card+`//textarea`, `{"path": `),
		chromedp.Click(card+`//button[normalize-space()="Approve with edited arguments"]`))
	p.until("the refusal", `document.querySelector('section[aria-label="Action write_file"] [role=alert]')?.textContent.includes('not JSON')`)
	if runOf()["status"] != "waiting_approval" {
		t.Fatal("arguments that are not JSON were sent")
	}
	p.do("edit the arguments", chromedp.SetValue(card+`//textarea`, `{"path": "PLAN-edited.md", "content": "edited on the page\n"}`),
		chromedp.Click(card+`//button[normalize-space()="Approve with edited arguments"]`))
	p.until("the run to finish", `document.querySelector('#run-status')?.textContent === 'succeeded'`)
	first := runOf()
	a := actionOf(first["id"].(string))
	if a["approval"] != "edited" || !strings.Contains(toJSON(a["args"]), "PLAN-edited.md") || !strings.Contains(toJSON(a["original_args"]), `"PLAN.md"`) || a["status"] != "succeeded" {
		t.Fatalf("after approving edited arguments the call is %v", a)
	}
	if b, err := os.ReadFile(filepath.Join(data, "workspaces", sid, "PLAN-edited.md")); err != nil || string(b) != "edited on the page\n" {
		t.Fatalf("PLAN-edited.md = %q, %v", b, err)
	}

	// The run in the timeline: its journal with the edit and the fingerprints.
	summary := `//details[contains(@class,"run")]/summary[contains(.,` + jsString(first["id"].(string)) + `)]`
	p.do("open the run", chromedp.Click(summary))
	p.until("its tool calls", `!!document.querySelector('[aria-label="Tool calls"]')`)
	journal := p.eval(`document.querySelector('[aria-label="Tool calls"]').textContent`)
	fp, _ := a["fingerprint_after"].(string)
	if fp == "" || !strings.Contains(journal, "→ "+fp) || !strings.Contains(journal, "the model proposed") || !strings.Contains(journal, "PLAN-edited.md") {
		t.Fatalf("the run's journal shows %q; want the edited call with its fingerprint after %q", journal, fp)
	}
	p.check("journal")

	send("continue the task")
	p.until("the second approval", `document.querySelector('#run-status')?.textContent === 'waiting_approval' && document.querySelector('section[aria-label="Action write_file"] textarea')?.value.includes('step-1.md')`)
	p.do("reject", chromedp.SendKeys(card+`//input`, "not today"), chromedp.Click(card+`//button[normalize-space()="Reject"]`))
	p.until("the run to finish", `document.querySelector('#run-status')?.textContent === 'succeeded'`)
	a = actionOf(runOf()["id"].(string))
	if a["approval"] != "rejected" {
		t.Fatalf("after the rejection the call is %v", a)
	}
	if _, err := os.Stat(filepath.Join(data, "workspaces", sid, "work", "step-1.md")); !os.IsNotExist(err) {
		t.Fatalf("the rejected call wrote its file: %v", err)
	}
	if page := string(must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/messages?limit=100", nil, 200).body); !strings.Contains(page, "not today") {
		t.Fatalf("the model was not told the reason: %s", page)
	}
	p.check("rejected")
}
