package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// TestInspectorSessionPage: sign in with the local key the loopback server offers, create a
// session, send a message and see the streamed reply, see the working memory change and the diff
// between two versions, edit the memory from a stale version and see the conflict (nothing is
// overwritten), restart the server and continue the same session from the page.
func TestInspectorSessionPage(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	data := t.TempDir()
	addr := fixedAddr(t)
	srv := startServer(t, data, "--addr", addr, "--ui-local-key")
	key := localKey(t, data)
	p := newBrowserPage(t, srv.url)

	p.do("open the inspector", chromedp.Navigate(srv.url+"/ui/"),
		chromedp.WaitVisible(`//button[normalize-space()="Sign in as the local user of this machine"]`))
	p.check("sign-in")
	p.click("Sign in as the local user of this machine")
	p.until("the sessions list", `document.title.startsWith('Sessions')`)
	p.check("sessions-empty")

	p.do("create a session", chromedp.SendKeys(chromedp.CSS(`input[name=title]`), "Picnic"),
		chromedp.SendKeys(chromedp.CSS(`input[name=goal]`), "a picnic"),
		chromedp.Click(`//button[normalize-space()="Create session"]`))
	p.until("the session page", `document.querySelector('h1')?.textContent === 'Picnic' && !!document.querySelector('#memory-doc')?.textContent`)
	sid := strings.TrimPrefix(p.eval(`location.hash`), "#/s/")
	sess := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"?messages=0", nil, 200).json(t)
	if sess["title"] != "Picnic" {
		t.Fatalf("the page made %v", sess)
	}

	p.do("send a message", chromedp.SendKeys(chromedp.CSS(`textarea[name=message]`), picnic),
		chromedp.Click(`//button[normalize-space()="Send"]`))
	p.until("the run to finish", `document.querySelector('#run-status')?.textContent === 'succeeded'`)
	runs := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/runs", nil, 200).json(t)["items"].([]any)
	reply, _ := runs[0].(map[string]any)["reply"].(string)
	if reply == "" {
		t.Fatalf("runs = %v", runs)
	}
	p.until("the streamed reply", `document.querySelector('#reply')?.textContent === `+jsString(reply))
	p.until("the working memory of the run", `document.querySelector('#memory-doc').textContent.includes('"plan"')`)
	p.until("the run in the timeline", `[...document.querySelectorAll('details summary')].some((s) => s.textContent.includes('succeeded'))`)
	p.check("session-after-run")

	// The diff between the two newest revisions (the form's default choice).
	p.click("Show the diff")
	p.until("the diff", `document.querySelector('#memory-diff table')?.textContent.includes('/plan')`)
	p.check("memory-diff")

	// A stale edit: the page's editor is based on the version it read; the session moves on.
	p.allowConsole(`status of 409 .*/working_memory$`)
	p.do("type a patch", chromedp.SetValue(chromedp.CSS(`textarea[name=patch]`), `{"notes":["from the page"]}`))
	must(t, srv.url, key, "PATCH", "/v1/sessions/"+sid+"/memory", map[string]any{"patch": map[string]any{"next_action": "from elsewhere"}}, 200)
	p.click("Save the patch")
	p.until("the conflict", `document.querySelector('#memory-conflict')?.textContent.includes('from elsewhere')`)
	p.check("memory-conflict")
	mem := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/memory", nil, 200).json(t)["working_memory"].(map[string]any)
	if strings.Contains(toJSON(mem), "from the page") {
		t.Fatalf("the stale patch was written: %v", mem)
	}
	p.click("Use the current version and edit again")
	now := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/memory", nil, 200).json(t)["version"].(float64)
	p.until("the editor on the current version", fmt.Sprintf(`!document.querySelector('#memory-conflict') && document.querySelector('#editor-base').textContent === 'The patch is based on session version %v.'`, now))
	p.do("type the patch again", chromedp.SetValue(chromedp.CSS(`textarea[name=patch]`), `{"notes":["from the page"]}`))
	p.click("Save the patch")
	p.until("the saved patch", `document.querySelector('#memory-doc').textContent.includes('from the page') && !document.querySelector('#memory-conflict')`)
	mem = must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/memory", nil, 200).json(t)["working_memory"].(map[string]any)
	if !strings.Contains(toJSON(mem["notes"]), "from the page") || mem["next_action"] != "from elsewhere" {
		t.Fatalf("after the rebased patch the memory is %v", mem)
	}

	// The context preview.
	p.click("Preview the context")
	p.until("the context parts", `document.querySelector('table[aria-label="Context parts"]')?.textContent.includes('working_memory')`)

	// Restart the server on the same address; the page (still signed in) continues the session.
	srv.kill()
	srv = startServer(t, data, "--addr", addr, "--ui-local-key")
	p.do("reload", chromedp.Reload())
	p.until("the session page again", `document.querySelector('h1')?.textContent === 'Picnic' && !!document.querySelector('textarea[name=message]')`)
	p.do("continue", chromedp.SendKeys(chromedp.CSS(`textarea[name=message]`), "continue the task"),
		chromedp.Click(`//button[normalize-space()="Send"]`))
	p.until("the second run to finish", `document.querySelector('#run-status')?.textContent === 'succeeded'`)
	runs = must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/runs", nil, 200).json(t)["items"].([]any)
	if len(runs) != 2 || runs[0].(map[string]any)["status"] != "succeeded" || runs[0].(map[string]any)["message"] != "continue the task" {
		t.Fatalf("after the restart the runs are %v", runs)
	}
	p.until("the second reply", `document.querySelector('#reply')?.textContent === `+jsString(runs[0].(map[string]any)["reply"].(string)))

	// Phone width, then the dark theme the system setting selects.
	p.do("phone width", chromedp.EmulateViewport(390, 844))
	p.check("session-phone")
	p.do("dark theme", chromedp.EmulateViewport(1280, 800), func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
		return chromedp.Void{}, err
	})
	if bg := p.eval(`getComputedStyle(document.body).backgroundColor`); bg != "rgb(18, 18, 18)" {
		t.Fatalf("with a dark system setting the page's background is %s", bg)
	}
	p.check("session-dark")
}

// TestInspectorApproval: a profile whose write_file asks for approval stops the run; the page
// shows the waiting call with its arguments, survives a server restart (the page follows the
// waiting run again after a reload), and approving it lets the run finish.
func TestInspectorApproval(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	file := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(file, []byte("providers:\n  offline: {kind: scripted}\nagents:\n  default:\n    provider: offline\n    approval: {write_file: always}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	addr := fixedAddr(t)
	srv := startServer(t, data, "--addr", addr, "--agents", file)
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "approvals"}, 201).json(t)["id"].(string)
	p := newBrowserPage(t, srv.url)
	p.signIn(key)
	p.do("open the session", chromedp.Navigate(srv.url+"/ui/#/s/"+sid), chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)))
	p.do("send a message", chromedp.SendKeys(chromedp.CSS(`textarea[name=message]`), picnic),
		chromedp.Click(`//button[normalize-space()="Send"]`))
	p.until("the approval", `!!document.querySelector('section[aria-label="Action write_file"]')`)
	p.check("approval")
	args := p.eval(`document.querySelector('section[aria-label="Action write_file"] textarea').value`)
	if !strings.Contains(args, `"path"`) {
		t.Fatalf("the approval shows %q, want the proposed arguments", args)
	}

	p.allowConsole(`net::ERR_[A-Z_]+ `) // the page streams from the killed server
	srv.kill()
	srv = startServer(t, data, "--addr", addr, "--agents", file)
	p.do("reload", chromedp.Reload())
	p.until("the approval after the restart", `!!document.querySelector('section[aria-label="Action write_file"]') && document.querySelector('#run-status')?.textContent === 'waiting_approval'`)
	p.click("Approve")
	p.until("the run to finish", `document.querySelector('#run-status')?.textContent === 'succeeded'`)
	p.check("approved")
	runs := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/runs", nil, 200).json(t)["items"].([]any)
	runID := runs[0].(map[string]any)["id"].(string)
	approved := false
	for _, a := range must(t, srv.url, key, "GET", "/v1/runs/"+runID+"/actions", nil, 200).json(t)["items"].([]any) {
		if a := a.(map[string]any); a["tool"] == "write_file" && a["approval"] == "approved" && a["status"] == "succeeded" {
			approved = true
		}
	}
	if !approved || runs[0].(map[string]any)["status"] != "succeeded" {
		t.Fatalf("after the approval: %v", runs[0])
	}
}

// TestInspectorClientTools: a run offered a client-side tool from the page stops in
// requires_action; the page shows the call and the typed output reaches the model.
func TestInspectorClientTools(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	m := newWeatherModel(t)
	data := t.TempDir()
	srv := startServerEnv(t, data, []string{"OPENAI_BASE_URL=" + m.URL + "/v1", "OPENAI_API_KEY=sk-test"}, "--provider", "openai", "--model", "gpt-test")
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "weather"}, 201).json(t)["id"].(string)
	p := newBrowserPage(t, srv.url)
	p.signIn(key)
	p.do("open the session", chromedp.Navigate(srv.url+"/ui/#/s/"+sid), chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)))
	p.do("declare the tool", chromedp.Click(`//summary[normalize-space()="Client-side tools"]`),
		chromedp.SetValue(chromedp.CSS(`textarea[name=tools]`), `[{"name":"get_weather","description":"The weather in a city.","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]`),
		chromedp.SendKeys(chromedp.CSS(`textarea[name=message]`), "Weather in Paris?"),
		chromedp.Click(`//button[normalize-space()="Send"]`))
	p.until("the pending call", `!!document.querySelector('form[aria-label="Client tool outputs"] textarea') && document.querySelector('#run-status')?.textContent === 'requires_action'`)
	if got := p.eval(`document.querySelector('form[aria-label="Client tool outputs"]').textContent`); !strings.Contains(got, "Paris") || !strings.Contains(got, "call_w") {
		t.Fatalf("the pending call shows %q", got)
	}
	p.check("requires-action")
	p.do("answer", chromedp.SendKeys(chromedp.CSS(`form[aria-label="Client tool outputs"] textarea`), "sunny, 21 °C"))
	p.click("Send outputs")
	p.until("the reply", `document.querySelector('#run-status')?.textContent === 'succeeded' && document.querySelector('#reply')?.textContent === 'The weather: sunny, 21 °C'`)
	p.check("answered")
}

// TestInspectorUsers: the admin creates a user on the admin page (its key is shown once); that
// user, signed in with it, sees none of the admin's sessions and gets "not found" for one of
// them; long-term memory shows only the caller's items.
func TestInspectorUsers(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	secret := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "the admin's secret plans"}, 201).json(t)["id"].(string)
	must(t, srv.url, key, "PUT", "/v1/memories/prefs/editor", map[string]any{"value": "vim", "text": "prefers vim"}, 200)

	p := newBrowserPage(t, srv.url)
	p.signIn(key)
	p.until("the admin's session", `document.querySelector('table tbody').textContent.includes("the admin's secret plans")`)
	p.check("sessions")
	p.do("long-term memory", chromedp.Navigate(srv.url+"/ui/#/memories"))
	p.until("the admin's item", `!!document.querySelector('section[aria-label="prefs/editor"]')`)
	p.check("memories")
	p.do("edit the item", chromedp.SetValue(`//section[@aria-label="prefs/editor"]//textarea`, `"emacs"`),
		chromedp.Click(`//section[@aria-label="prefs/editor"]//button[normalize-space()="Save"]`))
	p.until("the saved item", `document.querySelector('section[aria-label="prefs/editor"] .muted').textContent.includes('version 2')`)
	if got := must(t, srv.url, key, "GET", "/v1/memories/prefs/editor", nil, 200).json(t); got["value"] != "emacs" {
		t.Fatalf("after the edit the item is %v", got)
	}
	p.do("search", chromedp.SendKeys(chromedp.CSS(`input[type=search]`), "vim"), chromedp.Click(`//button[normalize-space()="Show"]`))
	p.until("the search result", `document.querySelector('section[aria-label="prefs/editor"] .muted')?.textContent.includes('score')`)
	p.do("delete the item", chromedp.Click(`//section[@aria-label="prefs/editor"]//button[normalize-space()="Delete"]`),
		chromedp.Click(`//section[@aria-label="prefs/editor"]//button[normalize-space()="Yes, delete"]`))
	p.until("the item gone", `!document.querySelector('section[aria-label="prefs/editor"]')`)
	must(t, srv.url, key, "GET", "/v1/memories/prefs/editor", nil, 404)
	must(t, srv.url, key, "PUT", "/v1/memories/prefs/theme", map[string]any{"value": "dark", "text": "prefers vim"}, 200)
	p.do("admin", chromedp.Navigate(srv.url+"/ui/#/admin"), chromedp.WaitVisible(`//button[normalize-space()="Create user"]`))
	p.do("create a user", chromedp.SendKeys(`//form[@aria-label="New user"]//input[@type="text"]`, "carol"),
		chromedp.Click(`//button[normalize-space()="Create user"]`))
	p.until("the new key", `!!document.querySelector('#new-secret')?.textContent`)
	p.check("admin")
	carol := p.eval(`document.querySelector('#new-secret').textContent`)
	if must(t, srv.url, carol, "GET", "/v1/me", nil, 200).json(t)["name"] != "carol" {
		t.Fatal("the shown key is not carol's")
	}

	// A second key for carol, revoked from the page.
	p.do("another key", chromedp.Click(`//section[@aria-label="User carol"]//button[normalize-space()="Create a key"]`))
	p.until("the second key", `!!document.querySelector('#new-secret') && document.querySelector('#new-secret').textContent !== `+jsString(carol)+` && document.querySelectorAll('section[aria-label="User carol"] li').length === 2`)
	second := p.eval(`document.querySelector('#new-secret').textContent`)
	must(t, srv.url, second, "GET", "/v1/me", nil, 200)
	p.do("revoke it", chromedp.Click(`//section[@aria-label="User carol"]//li[2]//button[normalize-space()="Revoke"]`),
		chromedp.Click(`//section[@aria-label="User carol"]//li[2]//button[normalize-space()="Yes, revoke"]`))
	p.until("revoked", `document.querySelector('section[aria-label="User carol"] li:nth-child(2)')?.textContent.includes('revoked')`)
	must(t, srv.url, second, "GET", "/v1/me", nil, 401)
	must(t, srv.url, carol, "GET", "/v1/me", nil, 200)

	p.click("Sign out")
	p.until("the sign-in page", `!!document.querySelector('input[name=key]')`)
	p.signIn(carol)
	p.until("an empty list", `document.querySelector('table tbody').childElementCount === 0 && document.body.textContent.includes('0 sessions shown')`)
	p.check("sessions-of-another-user")
	if strings.Contains(p.eval(`document.body.textContent`), "secret plans") {
		t.Fatal("carol sees the admin's session")
	}
	p.allowConsole(`status of 404 .*/v1/sessions/` + secret + `\?messages=0$`)
	p.do("the admin's session by id", chromedp.Navigate(srv.url+"/ui/#/s/"+secret))
	p.until("not found", `document.body.textContent.includes('not_found')`)
	p.do("long-term memory", chromedp.Navigate(srv.url+"/ui/#/memories"))
	p.until("no items", `document.body.textContent.includes('No items.')`)
	p.do("search as carol", chromedp.SendKeys(chromedp.CSS(`input[type=search]`), "vim"), chromedp.Click(`//button[normalize-space()="Show"]`))
	p.until("no results", `document.querySelector('[data-loaded="vim"]')?.textContent.includes('No items.')`)
	if strings.Contains(p.eval(`document.body.textContent`), "prefers vim") {
		t.Fatal("carol sees the admin's long-term memory")
	}
}

// toJSON is v as JSON text.
func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestInspectorSessionControls: with a run waiting for approval the session is busy; the page says
// so and offers the multitask choice; interrupting queues the new run, which the page follows and
// cancels. Then close (after a confirmation), restore, fork at a version, and delete the session.
func TestInspectorSessionControls(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	file := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(file, []byte("providers:\n  offline: {kind: scripted}\nagents:\n  default:\n    provider: offline\n    approval: {write_file: always}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	srv := startServer(t, data, "--agents", file)
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "controls"}, 201).json(t)["id"].(string)
	p := newBrowserPage(t, srv.url)
	p.signIn(key)
	p.do("open the session", chromedp.Navigate(srv.url+"/ui/#/s/"+sid), chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)))
	send := func(text string) {
		t.Helper()
		p.do("send "+text, chromedp.SendKeys(chromedp.CSS(`textarea[name=message]`), text), chromedp.Click(`//button[normalize-space()="Send"]`))
	}
	send(picnic)
	p.until("the approval", `document.querySelector('#run-status')?.textContent === 'waiting_approval'`)
	first := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/runs", nil, 200).json(t)["items"].([]any)[0].(map[string]any)["id"].(string)

	p.allowConsole(`status of 409 .*/v1/sessions/` + sid + `/runs$`) // busy, then closed: refusals the test provokes
	send("Task: water the plants, then feed the cat")
	p.until("the busy notice", `document.querySelector('form[aria-label="Chat"] [role=alert]')?.textContent.includes(`+jsString(first)+`)`)
	p.check("busy")
	if got := p.eval(`document.activeElement.name`); got != "multitask" {
		t.Fatalf("after the busy notice the focus is on %q, want the multitask choice", got)
	}
	p.do("choose interrupt", chromedp.SetValue(chromedp.CSS(`select[name=multitask]`), "interrupt"),
		chromedp.Click(`//button[normalize-space()="Send"]`))
	p.until("the new run followed", `!!document.querySelector('#live')?.textContent.includes('Run ') && !document.querySelector('#live').textContent.includes(`+jsString(first)+`)`)
	p.click("Cancel run")
	p.until("the cancelled run", `document.querySelector('#run-status')?.textContent === 'cancelled'`)
	runs := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/runs", nil, 200).json(t)["items"].([]any)
	if len(runs) != 2 || runs[0].(map[string]any)["status"] != "cancelled" || runs[1].(map[string]any)["status"] != "interrupted" {
		t.Fatalf("runs = %v, want the new one cancelled and the first interrupted", runs)
	}

	// Close asks first; Cancel leaves the session as it is.
	p.click("Close session")
	p.click("Cancel")
	if got := must(t, srv.url, key, "GET", "/v1/sessions/"+sid, nil, 200).json(t)["status"]; got != "active" {
		t.Fatalf("after Cancel the session is %v", got)
	}
	p.click("Close session")
	p.click("Yes, close session")
	p.until("closed", `document.querySelector('#session-status')?.textContent === 'closed'`)
	p.check("closed")
	send("more")
	p.until("the refusal", `document.querySelector('form[aria-label="Chat"] [role=alert]')?.textContent.includes('session_closed')`)
	p.click("Restore session")
	p.click("Yes, restore session")
	p.until("restored", `document.querySelector('#session-status')?.textContent === 'active'`)

	version := p.eval(`document.querySelector('#session-version').textContent`)
	p.do("fork at version 2", chromedp.SetValue(`//label[starts-with(normalize-space(),"Fork at version")]/input`, "2"))
	p.click("Fork")
	p.click("Yes, fork")
	p.until("the fork", `location.hash !== `+jsString("#/s/"+sid)+` && document.body.textContent.includes('Forked from')`)
	fork := strings.TrimPrefix(p.eval(`location.hash`), "#/s/")
	f := must(t, srv.url, key, "GET", "/v1/sessions/"+fork, nil, 200).json(t)
	if f["parent_id"] != sid || f["fork_version"] != float64(2) || f["message_count"] != float64(1) {
		t.Fatalf("fork = %v (the source was at version %s)", f, version)
	}

	p.do("back to the source", chromedp.Navigate(srv.url+"/ui/#/s/"+sid), chromedp.WaitVisible(`//button[normalize-space()="Delete session"]`))
	p.click("Delete session")
	p.click("Yes, delete session")
	p.until("the list", `location.hash === '#/sessions' && document.title.startsWith('Sessions')`)
	must(t, srv.url, key, "GET", "/v1/sessions/"+sid, nil, 404)
	must(t, srv.url, key, "GET", "/v1/sessions/"+fork, nil, 200)
}
