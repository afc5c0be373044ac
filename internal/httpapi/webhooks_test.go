package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/webhooks"
)

// The webhook routes over HTTP: create answers the secret once with a Location, reads never
// show it, another user's webhook is 404, bad input is a 400 problem that stores nothing, and
// request ids are refused, since these routes take none.
func TestWebhookRoutes(t *testing.T) {
	e := newEnv(t, nil)
	s := e.newSession("hooked")
	a := e.json("POST", "/v1/webhooks", e.aliceKey, `{"url":"https://example.com/hook","events":["run.completed","run.requires_action"],"session_id":"`+s.ID+`"}`)
	wantStatus(t, a, http.StatusCreated)
	hook := decodeBody[webhooks.Webhook](t, a)
	if !strings.HasPrefix(hook.Secret, "whsec_") || hook.SessionID != s.ID || a.header.Get("Location") != "/v1/webhooks/"+hook.ID {
		t.Fatalf("created %+v, Location %q", hook, a.header.Get("Location"))
	}
	secret := strings.TrimPrefix(hook.Secret, "whsec_")
	for _, path := range []string{"/v1/webhooks", "/v1/webhooks/" + hook.ID, "/v1/webhooks/" + hook.ID + "/deliveries"} {
		a := e.json("GET", path, e.aliceKey, "")
		wantStatus(t, a, http.StatusOK)
		if strings.Contains(string(a.body), secret) {
			t.Errorf("GET %s shows the secret", path)
		}
		wantProblem(t, e.json("GET", path+"?x=1", e.aliceKey, ""), http.StatusBadRequest, carryon.EINVALID)
	}
	wantProblem(t, e.json("GET", "/v1/webhooks/"+hook.ID, e.bobKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
	wantProblem(t, e.json("DELETE", "/v1/webhooks/"+hook.ID, e.bobKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
	wantProblem(t, e.json("POST", "/v1/webhooks", e.bobKey, `{"url":"https://example.com/hook","events":["run.completed"],"session_id":"`+s.ID+`"}`), http.StatusNotFound, carryon.ENOTFOUND)
	for _, body := range []string{
		`{"url":"https://example.com/hook","events":["run.exploded"]}`,
		`{"url":"https://example.com/hook","events":[]}`,
		`{"url":"ftp://example.com/hook","events":["run.completed"]}`,
		`{"url":"https://example.com/hook","events":["run.completed"],"secret":"mine"}`,
	} {
		wantProblem(t, e.json("POST", "/v1/webhooks", e.bobKey, body), http.StatusBadRequest, carryon.EINVALID)
	}
	wantProblem(t, e.json("POST", "/v1/webhooks", e.bobKey, `{"url":"https://example.com/hook","events":["run.completed"]}`, "Idempotency-Key", "k1"), http.StatusBadRequest, carryon.EINVALID)
	wantProblem(t, e.json("PATCH", "/v1/webhooks/"+hook.ID, e.aliceKey, `{"paused":true}`, "If-Match", `"1"`), http.StatusBadRequest, carryon.EINVALID)
	if l := decodeBody[webhooks.WebhookList](t, e.json("GET", "/v1/webhooks", e.bobKey, "")); len(l.Items) != 0 {
		t.Errorf("bob's refused creates stored %v", l.Items)
	}

	p := decodeBody[webhooks.Webhook](t, e.json("PATCH", "/v1/webhooks/"+hook.ID, e.aliceKey, `{"paused":true,"events":["run.failed"]}`))
	if !p.Paused || len(p.Events) != 1 || p.Events[0] != "run.failed" || p.Secret != "" {
		t.Errorf("patched %+v", p)
	}
	wantProblem(t, e.json("PATCH", "/v1/webhooks/"+hook.ID, e.aliceKey, `{"events":["nope"]}`), http.StatusBadRequest, carryon.EINVALID)
	r := decodeBody[webhooks.Webhook](t, e.json("POST", "/v1/webhooks/"+hook.ID+"/rotate", e.aliceKey, ""))
	if r.Secret == "" || r.Secret == hook.Secret || r.PreviousSecretExpiresAt == nil {
		t.Errorf("rotated %+v", r)
	}
	wantProblem(t, e.json("POST", "/v1/webhooks/"+hook.ID+"/rotate", e.aliceKey, `{"previous_valid_seconds":-1}`), http.StatusBadRequest, carryon.EINVALID)
	wantProblem(t, e.json("POST", "/v1/webhooks/"+hook.ID+"/deliveries/whd_nope/redeliver", e.aliceKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
	wantStatus(t, e.json("DELETE", "/v1/webhooks/"+hook.ID, e.aliceKey, ""), http.StatusNoContent)
	wantProblem(t, e.json("GET", "/v1/webhooks/"+hook.ID, e.aliceKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
}
