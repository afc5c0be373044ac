package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/chromedp/chromedp"
)

// TestInspectorSchedules: a session's page lists its schedules with their timing, time zone,
// next fire time, state and last tick, whose run link opens the run (which says the schedule
// started it); pause, resume, run now and delete act through the API; a schedule made with the
// page's form is stored, a bad cron shows the API's reason and stores nothing; #/schedules lists
// every session's.
func TestInspectorSchedules(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "inbox"}, 201).json(t)["id"].(string)
	other := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "garden"}, 201).json(t)["id"].(string)
	cron := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/schedules", map[string]any{
		"cron": "0 8 * * 1-5", "timezone": "Europe/Paris", "message": "check the inbox", "catch_up": "latest"}, 201).json(t)
	once := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/schedules", map[string]any{
		"at": time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano), "message": "Task: remind me"}, 201).json(t)
	must(t, srv.url, key, "POST", "/v1/sessions/"+other+"/schedules", map[string]any{"every": "1h", "message": "water the plants"}, 201)
	var fired map[string]any
	poll.Eventually(t, "the one-time schedule to fire", func() bool {
		fired = must(t, srv.url, key, "GET", "/v1/schedules/"+once["id"].(string), nil, 200).json(t)
		return fired["status"] == "done" && fired["last_run_id"] != nil
	})
	runID := fired["last_run_id"].(string)

	p := newBrowserPage(t, srv.url)
	p.signIn(key)
	p.do("open the session", chromedp.Navigate(srv.url+"/ui/#/s/"+sid))
	cronRow := `document.querySelector('#session-schedules tr[data-schedule="` + cron["id"].(string) + `"]')`
	onceRow := `document.querySelector('#session-schedules tr[data-schedule="` + once["id"].(string) + `"]')`
	p.until("the schedules", `document.querySelector('#session-schedules')?.dataset.loaded === '2'`)
	got := p.eval(cronRow + `.textContent`)
	for _, want := range []string{"cron 0 8 * * 1-5 (Europe/Paris)", "check the inbox", "active", "overlap skip · catch-up latest", "never"} {
		if !strings.Contains(got, want) {
			t.Fatalf("the cron schedule's row is %q, without %q", got, want)
		}
	}
	if next := p.eval(cronRow + `.querySelector('.next-fire time').getAttribute('datetime')`); next != cron["next_fire_at"] {
		t.Fatalf("the page says the next fire is %s, the API %v", next, cron["next_fire_at"])
	}
	got = p.eval(onceRow + `.textContent`)
	for _, want := range []string{"done", "fired 1×", "fired", runID} {
		if !strings.Contains(got, want) {
			t.Fatalf("the fired schedule's row is %q, without %q", got, want)
		}
	}
	if strings.Contains(p.eval(`document.querySelector('#session-schedules').textContent`), "water the plants") {
		t.Fatal("the session's panel lists another session's schedule")
	}
	p.check("schedules-panel")

	// The last run's link opens it in the timeline; the run says which schedule started it.
	p.do("open the last run", chromedp.Click(`//tr[@data-schedule=`+jsString(once["id"].(string))+`]//a[normalize-space()=`+jsString(runID)+`]`))
	p.until("the run opened", `location.hash === '#/s/`+sid+`/`+runID+`' && document.getElementById('run-`+runID+`')?.open && document.querySelector('#run-`+runID+` .started-by')?.textContent.includes('schedule `+once["id"].(string)+`')`)
	if got := p.eval(`document.querySelector('#run-` + runID + ` summary').textContent`); !strings.Contains(got, "started by schedule "+once["id"].(string)) {
		t.Fatalf("the scheduled run's summary is %q", got)
	}
	p.check("scheduled-run")

	status := func(id string) any {
		return must(t, srv.url, key, "GET", "/v1/schedules/"+id, nil, 200).json(t)["status"]
	}
	id := cron["id"].(string)
	p.click("Pause")
	p.until("paused", cronRow+`?.querySelector('.status').textContent === 'paused' && `+cronRow+`.querySelector('.next-fire').textContent === '—'`)
	if s := status(id); s != "paused" {
		t.Fatalf("after Pause the schedule is %v", s)
	}
	p.click("Resume")
	p.until("resumed", cronRow+`?.querySelector('.status').textContent === 'active'`)
	if s := status(id); s != "active" {
		t.Fatalf("after Resume the schedule is %v", s)
	}
	p.do("run now", chromedp.Click(`//tr[@data-schedule=`+jsString(id)+`]//button[normalize-space()="Run now"]`))
	p.until("the run now to finish", `document.querySelector('#run-status')?.textContent === 'succeeded'`)
	runs := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/runs", nil, 200).json(t)["items"].([]any)
	if len(runs) != 2 || runs[0].(map[string]any)["message"] != "check the inbox" {
		t.Fatalf("after Run now the runs are %v", runs)
	}
	p.do("delete", chromedp.Click(`//tr[@data-schedule=`+jsString(id)+`]//button[normalize-space()="Delete"]`),
		chromedp.Click(`//tr[@data-schedule=`+jsString(id)+`]//button[normalize-space()="Yes, delete"]`))
	p.until("deleted", `document.querySelector('#session-schedules').dataset.loaded === '1' && !`+cronRow)
	must(t, srv.url, key, "GET", "/v1/schedules/"+id, nil, 404)

	// The form: a bad cron is refused with the API's reason; a good one is stored.
	p.allowConsole(`status of 400 .*/v1/sessions/` + sid + `/schedules$`)
	p.do("a bad cron", chromedp.Click(`//summary[normalize-space()="New schedule"]`),
		chromedp.SendKeys(chromedp.CSS(`input[name=schedule-when]`), "0 25 * * *"),
		chromedp.SendKeys(chromedp.CSS(`input[name=schedule-message]`), "never"),
		chromedp.Click(`//button[normalize-space()="Create schedule"]`))
	p.until("the refusal", `document.querySelector('form[aria-label="New schedule"] [role=alert]')?.textContent.includes('invalid cron')`)
	p.check("schedule-refused")
	if n := len(must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/schedules", nil, 200).json(t)["items"].([]any)); n != 1 {
		t.Fatalf("after a refused create the session has %d schedules", n)
	}
	p.do("every 5 minutes", chromedp.SetValue(chromedp.CSS(`select[name=schedule-kind]`), "every"),
		chromedp.SetValue(chromedp.CSS(`input[name=schedule-when]`), "5m"),
		chromedp.Click(`//button[normalize-space()="Create schedule"]`))
	p.until("the new schedule", `document.querySelector('#session-schedules').dataset.loaded === '2' && document.querySelector('#session-schedules').textContent.includes('every 5m')`)
	items := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/schedules", nil, 200).json(t)["items"].([]any)
	if len(items) != 2 || toJSON(items) == "" || !strings.Contains(toJSON(items), `"every":"5m"`) || !strings.Contains(toJSON(items), `"message":"never"`) {
		t.Fatalf("after the form the schedules are %v", items)
	}

	// Every session's schedules, each with its session.
	p.do("every schedule", chromedp.Navigate(srv.url+"/ui/#/schedules"))
	p.until("the list", `document.querySelector('#schedules')?.dataset.loaded === '3'`)
	if got := p.eval(`document.querySelector('#schedules').textContent`); !strings.Contains(got, "water the plants") || !strings.Contains(got, other) || !strings.Contains(got, "every 5m") {
		t.Fatalf("#/schedules shows %q", got)
	}
	p.check("schedules-of-the-user")
	p.do("phone width", chromedp.EmulateViewport(390, 844))
	if w := p.eval(`String(document.documentElement.scrollWidth)`); w != "390" {
		t.Fatalf("at 390 px the schedules page is %s px wide", w)
	}
}

// flakyReceiver answers 503 until it is up, then 204; it counts the deliveries it took.
type flakyReceiver struct {
	*httptest.Server
	mu   sync.Mutex
	up   bool
	took []string // the webhook-id of each delivery answered 204
}

func newFlakyReceiver(t *testing.T) *flakyReceiver {
	rc := &flakyReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if !rc.up {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		rc.took = append(rc.took, r.Header.Get("webhook-id"))
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// TestInspectorWebhooks: #/webhooks lists the user's webhooks (URL, events, session scope, never
// a secret) and each one's delivery log; a delivery that failed (503 for the whole retry window)
// shows its status, attempts, response code and last error, and Redeliver sends it again once
// the receiver is up.
func TestInspectorWebhooks(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	rc := newFlakyReceiver(t)
	data := t.TempDir()
	srv := startServer(t, data, "--webhook-allow-http", "--webhook-allow-private", "--webhook-min-backoff", "50ms",
		"--webhook-max-backoff", "100ms", "--webhook-retry-for", "1s")
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "hooks"}, 201).json(t)["id"].(string)
	scoped := must(t, srv.url, key, "POST", "/v1/webhooks", map[string]any{"url": rc.URL + "/scoped", "events": []string{"run.completed", "run.failed"}, "session_id": sid}, 201).json(t)
	every := must(t, srv.url, key, "POST", "/v1/webhooks", map[string]any{"url": rc.URL + "/every", "events": []string{"schedule.fired"}}, 201).json(t)
	must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": picnic}, 202)
	log := "/v1/webhooks/" + scoped["id"].(string) + "/deliveries"
	var d map[string]any
	poll.Eventually(t, "the delivery to fail", func() bool {
		items := must(t, srv.url, key, "GET", log, nil, 200).json(t)["items"].([]any)
		if len(items) == 0 {
			return false
		}
		d = items[0].(map[string]any)
		return d["status"] == "failed"
	})

	p := newBrowserPage(t, srv.url)
	p.signIn(key)
	p.do("webhooks", chromedp.Navigate(srv.url+"/ui/#/webhooks"))
	card := `document.querySelector('section[data-webhook="` + scoped["id"].(string) + `"]')`
	p.until("the log", `document.querySelector('#webhooks')?.dataset.loaded === '2' && `+card+`?.dataset.loaded === '1'`)
	got := p.eval(card + `.textContent`)
	for _, want := range []string{rc.URL + "/scoped", "events run.completed, run.failed", "session " + sid, "run.completed", d["event_id"].(string), "failed", "503", "down for maintenance", "Redeliver"} {
		if !strings.Contains(got, want) {
			t.Fatalf("the webhook's card is %q, without %q", got, want)
		}
	}
	if got := p.eval(`document.querySelector('tr[data-delivery] td:nth-child(3)').textContent`); got != toJSON(d["attempts"]) {
		t.Fatalf("the page says %s attempts, the API %v", got, d["attempts"])
	}
	if got := p.eval(`document.querySelector('section[data-webhook="` + every["id"].(string) + `"]').textContent`); !strings.Contains(got, "every session") || !strings.Contains(got, "Nothing delivered yet.") {
		t.Fatalf("the unscoped webhook's card is %q", got)
	}
	if body := p.eval(`document.body.textContent`); strings.Contains(body, "whsec_") || strings.Contains(body, scoped["secret"].(string)) {
		t.Fatal("the page shows a webhook secret")
	}
	p.check("webhooks")

	rc.mu.Lock()
	rc.up = true
	rc.mu.Unlock()
	p.click("Redeliver")
	p.until("queued again", `document.querySelector('tr[data-delivery] .status')?.textContent === 'pending'`)
	poll.Eventually(t, "the redelivery", func() bool {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		return len(rc.took) == 1
	})
	if rc.took[0] != d["event_id"] {
		t.Fatalf("the redelivery has webhook-id %q, want the event's %v", rc.took[0], d["event_id"])
	}
	p.do("reload", chromedp.Reload())
	p.until("delivered", `document.querySelector('tr[data-delivery] .status')?.textContent === 'delivered'`)
	if got := p.eval(`document.querySelector('tr[data-delivery]').textContent`); !strings.Contains(got, "204") || !strings.Contains(got, "delivered ") {
		t.Fatalf("the delivered row is %q", got)
	}
	p.check("webhook-redelivered")
}
