package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
)

// TestScheduleRoutes: create, list per session and per user, get, pause, resume, change the
// spec, run now and delete; another user gets 404 for all of it.
func TestScheduleRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("scheduled")
	a := e.json("POST", "/v1/sessions/"+s.ID+"/schedules", e.aliceKey,
		`{"cron":"0 8 * * 1-5","timezone":"Europe/Paris","message":"check my inbox","overlap":"enqueue","catch_up":"latest"}`)
	wantStatus(t, a, http.StatusCreated)
	sc := decodeBody[carryon.Schedule](t, a)
	if a.header.Get("Location") != "/v1/schedules/"+sc.ID {
		t.Fatalf("Location = %q", a.header.Get("Location"))
	}
	paris, _ := time.LoadLocation("Europe/Paris")
	if sc.Status != carryon.ScheduleActive || sc.NextFireAt == nil || sc.NextFireAt.In(paris).Hour() != 8 ||
		sc.NextFireAt.In(paris).Weekday() == time.Saturday || sc.NextFireAt.In(paris).Weekday() == time.Sunday ||
		sc.Overlap != "enqueue" || sc.CatchUp != "latest" || sc.SessionID != s.ID {
		t.Fatalf("created %+v", sc)
	}
	other := e.newSession("other")
	wantStatus(t, e.json("POST", "/v1/sessions/"+other.ID+"/schedules", e.aliceKey, `{"every":"2h","message":"ping"}`), http.StatusCreated)

	list := decodeBody[carryon.SchedulePage](t, e.json("GET", "/v1/sessions/"+s.ID+"/schedules", e.aliceKey, ""))
	if len(list.Items) != 1 || list.Items[0].ID != sc.ID {
		t.Fatalf("session list = %+v", list)
	}
	all := decodeBody[carryon.SchedulePage](t, e.json("GET", "/v1/schedules?limit=1", e.aliceKey, ""))
	if len(all.Items) != 1 || all.NextCursor == "" {
		t.Fatalf("user list page 1 = %+v", all)
	}
	rest := decodeBody[carryon.SchedulePage](t, e.json("GET", "/v1/schedules?limit=1&cursor="+all.NextCursor, e.aliceKey, ""))
	if len(rest.Items) != 1 || rest.NextCursor != "" || rest.Items[0].ID == all.Items[0].ID {
		t.Fatalf("user list page 2 = %+v", rest)
	}

	// Pause, resume, change the spec.
	p := decodeBody[carryon.Schedule](t, e.json("PATCH", "/v1/schedules/"+sc.ID, e.aliceKey, `{"paused":true}`))
	if p.Status != carryon.SchedulePaused || p.NextFireAt != nil {
		t.Fatalf("paused = %+v", p)
	}
	r := decodeBody[carryon.Schedule](t, e.json("PATCH", "/v1/schedules/"+sc.ID, e.aliceKey, `{"paused":false}`))
	if r.Status != carryon.ScheduleActive || r.NextFireAt == nil || !r.NextFireAt.Equal(*sc.NextFireAt) {
		t.Fatalf("resumed = %+v, want next fire %s", r, sc.NextFireAt)
	}
	c := decodeBody[carryon.Schedule](t, e.json("PATCH", "/v1/schedules/"+sc.ID, e.aliceKey, `{"every":"15m"}`))
	if c.Cron != "" || c.Every != "15m" || c.NextFireAt == nil || time.Until(*c.NextFireAt) > 15*time.Minute {
		t.Fatalf("changed = %+v", c)
	}
	got := decodeBody[carryon.Schedule](t, e.json("GET", "/v1/schedules/"+sc.ID, e.aliceKey, ""))
	if got.Every != "15m" || got.Timezone != "Europe/Paris" {
		t.Fatalf("get = %+v", got)
	}

	// Run now starts the run with the schedule's message; a repeat with the request id answers it again.
	a = e.json("POST", "/v1/schedules/"+sc.ID+"/run", e.aliceKey, "", "Idempotency-Key", "now-1")
	wantStatus(t, a, http.StatusCreated)
	run := decodeBody[carryon.Run](t, a)
	if run.Message != "check my inbox" || run.SessionID != s.ID {
		t.Fatalf("run now = %+v", run)
	}
	again := e.json("POST", "/v1/schedules/"+sc.ID+"/run", e.aliceKey, "", "Idempotency-Key", "now-1")
	if decodeBody[carryon.Run](t, again).ID != run.ID || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("repeat of run now = %s %v", again.body, again.header)
	}

	// Bob sees none of it.
	for _, rq := range []struct{ method, path, body string }{
		{"POST", "/v1/sessions/" + s.ID + "/schedules", `{"every":"1h","message":"x"}`},
		{"GET", "/v1/sessions/" + s.ID + "/schedules", ""},
		{"GET", "/v1/schedules/" + sc.ID, ""},
		{"PATCH", "/v1/schedules/" + sc.ID, `{"paused":true}`},
		{"POST", "/v1/schedules/" + sc.ID + "/run", ""},
		{"DELETE", "/v1/schedules/" + sc.ID, ""},
	} {
		wantProblem(t, e.json(rq.method, rq.path, e.bobKey, rq.body), http.StatusNotFound, carryon.ENOTFOUND)
	}
	if l := decodeBody[carryon.SchedulePage](t, e.json("GET", "/v1/schedules", e.bobKey, "")); len(l.Items) != 0 {
		t.Fatalf("bob lists %+v", l)
	}

	wantStatus(t, e.json("DELETE", "/v1/schedules/"+sc.ID, e.aliceKey, ""), http.StatusNoContent)
	wantProblem(t, e.json("GET", "/v1/schedules/"+sc.ID, e.aliceKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
	// Deleting the session deletes its schedules.
	wantStatus(t, e.json("DELETE", "/v1/sessions/"+other.ID, e.aliceKey, ""), http.StatusNoContent)
	if l := decodeBody[carryon.SchedulePage](t, e.json("GET", "/v1/schedules", e.aliceKey, "")); len(l.Items) != 0 {
		t.Fatalf("after deleting the session: %+v", l)
	}
}

// TestScheduleBadInput: every refusal is 400 with the reason, and stores nothing.
func TestScheduleBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("scheduled")
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	for _, c := range []struct{ body, detail string }{
		{`{"cron":"61 * * * *","message":"x"}`, "invalid cron"},
		{`{"cron":"every morning","message":"x"}`, "invalid cron"},
		{`{"cron":"0 8 * * *","timezone":"Mars/Olympus","message":"x"}`, "unknown time zone"},
		{`{"at":"` + past + `","message":"x"}`, "in the past"},
		{`{"every":"10s","message":"x"}`, "minimum interval"},
		{`{"every":"1h","until":"` + past + `","message":"x"}`, "until"},
		{`{"every":"1h","message":""}`, "message"},
		{`{"message":"x"}`, "exactly one"},
		{`{"cron":"0 8 * * *","every":"1h","message":"x"}`, "exactly one"},
		{`{"every":"1h","message":"x","overlap":"interrupt"}`, "overlap"},
		{`{"every":"1h","message":"x","catch_up":"all"}`, "catch_up"},
		{`{"every":"1h","message":"x","colour":"red"}`, "colour"},
	} {
		a := e.json("POST", "/v1/sessions/"+s.ID+"/schedules", e.aliceKey, c.body)
		wantProblem(t, a, http.StatusBadRequest, carryon.EINVALID)
		if !strings.Contains(a.problem.Detail, c.detail) {
			t.Errorf("%s: detail %q, want it to mention %q", c.body, a.problem.Detail, c.detail)
		}
	}
	if l := decodeBody[carryon.SchedulePage](t, e.json("GET", "/v1/schedules", e.aliceKey, "")); len(l.Items) != 0 {
		t.Fatalf("a refused create stored %+v", l)
	}
	sc := decodeBody[carryon.Schedule](t, e.json("POST", "/v1/sessions/"+s.ID+"/schedules", e.aliceKey, `{"every":"1h","message":"x"}`))
	for _, body := range []string{`{"cron":"nope"}`, `{"timezone":"Nowhere/City"}`, `{"cron":"0 8 * * *","every":"1h"}`} {
		wantProblem(t, e.json("PATCH", "/v1/schedules/"+sc.ID, e.aliceKey, body), http.StatusBadRequest, carryon.EINVALID)
	}
	if got := decodeBody[carryon.Schedule](t, e.json("GET", "/v1/schedules/"+sc.ID, e.aliceKey, "")); got.Every != "1h" || got.Timezone != "UTC" || !got.NextFireAt.Equal(*sc.NextFireAt) {
		t.Fatalf("a refused patch changed %+v", got)
	}
	wantProblem(t, e.json("POST", "/v1/sessions/sess_missing/schedules", e.aliceKey, `{"every":"1h","message":"x"}`), http.StatusNotFound, carryon.ENOTFOUND)
}
