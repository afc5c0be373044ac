package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/openapicheck"
	"github.com/carryon-hub/carryon/internal/wire"
)

// The answers the OpenAPI document used to get wrong, each received through the checked client
// (so each is validated against the document): the context preview, the event stream of a run
// start and of a run's events, approve's 409, a taken user name's 409, 501 without a service, and
// HEAD on every GET route.
func TestOpenAPIDeclaresEdgeAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	c := e.client(e.aliceKey)
	cx := ctx(t)
	s := e.newSession("edges")
	runID, st, err := c.StartStream(cx, s.ID, carryon.NewRun{Message: task})
	if err != nil {
		t.Fatal(err)
	}
	wantComplete(t, drain(t, st), 0)

	a := e.json("GET", "/v1/sessions/"+s.ID+"/context", e.aliceKey, "")
	wantStatus(t, a, http.StatusOK)
	if !strings.Contains(string(a.body), `"messages":[{"role":"user"`) {
		t.Errorf("context answer %s, want model messages", a.body)
	}
	wantProblem(t, e.json("POST", "/v1/runs/"+runID+"/approve", e.aliceKey, `{"action_id":"act_x","decision":"skip"}`), http.StatusConflict, carryon.ECONFLICT)
	wantProblem(t, e.json("POST", "/v1/users", e.adminKey, `{"name":"alice"}`), http.StatusConflict, carryon.ECONFLICT)
	if _, err := c.LongTerm().Put(cx, "notes", "tea", carryon.LongTermPut{Value: json.RawMessage(`"green"`)}); err != nil {
		t.Fatal(err)
	}
	me := decodeBody[carryon.User](t, e.json("GET", "/v1/me", e.aliceKey, ""))
	sc := decodeBody[carryon.Schedule](t, e.json("POST", "/v1/sessions/"+s.ID+"/schedules", e.aliceKey, `{"cron":"0 8 * * *","message":"morning"}`))

	hook := decodeBody[struct{ ID string }](t, e.json("POST", "/v1/webhooks", e.aliceKey, `{"url":"https://127.0.0.1:9/hook","events":["run.completed"]}`))
	ids := strings.NewReplacer("/v1/webhooks/{id}", "/v1/webhooks/"+hook.ID, "/v1/schedules/{id}", "/v1/schedules/"+sc.ID, "{id}/keys", me.ID+"/keys", "/v1/users/{id}", "/v1/users/"+me.ID, "/v1/runs/{id}", "/v1/runs/"+runID, "{id}", s.ID, "{namespace}", "notes", "{key}", "tea")
	heads := 0
	for _, rt := range httpapi.Routes() {
		if rt.Method != "GET" {
			continue
		}
		path := ids.Replace(rt.Pattern)
		if strings.HasSuffix(path, "/diff") {
			path += "?from=0&to=1"
		}
		a := e.json("HEAD", path, e.adminKey, "")
		if strings.HasPrefix(path, "/v1/sessions/") || strings.HasPrefix(path, "/v1/runs/") || strings.HasPrefix(path, "/v1/memories") || strings.HasPrefix(path, "/v1/webhooks") || strings.HasPrefix(path, "/v1/schedules") {
			a = e.json("HEAD", path, e.aliceKey, "")
		}
		if a.status != http.StatusOK || len(a.body) != 0 || a.header.Get("Content-Type") == "" {
			t.Errorf("HEAD %s: %d %q (Content-Type %q), want 200, headers and no body", path, a.status, a.body, a.header.Get("Content-Type"))
		}
		heads++
	}
	if heads < 15 {
		t.Errorf("only %d GET routes answered HEAD", heads)
	}

	bare := newEnv(t, func(cfg *httpapi.Config) {
		cfg.Runs, cfg.LongTerm, cfg.Context, cfg.Compact, cfg.Compactions = nil, nil, nil, nil, nil
	})
	for _, path := range []string{"/v1/runs/run_x", "/v1/memories", "/v1/sessions/" + bare.newSession("bare").ID + "/context"} {
		wantProblem(t, bare.json("GET", path, bare.aliceKey, ""), http.StatusNotImplemented, carryon.ENOTIMPLEMENTED)
	}
}

// The document names the servers, its context preview is made of the model's messages, and the
// check of answers refuses what the document does not say, against the real document: the
// session's Message shape in a context preview (what the document used to promise), an
// undeclared status, a problem code the route cannot answer, a missing ETag.
func TestOpenAPICheckRefusesDrift(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	var doc struct {
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(httpapi.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Servers) == 0 || doc.Servers[0].URL != "/" {
		t.Errorf("servers = %+v, want this server first", doc.Servers)
	}
	var preview bytes.Buffer
	if err := json.Compact(&preview, doc.Components.Schemas["ContextPreview"]); err != nil ||
		!strings.Contains(preview.String(), `"messages":{"items":{"$ref":"#/components/schemas/ModelMessage"}`) {
		t.Errorf("ContextPreview = %s, want ModelMessage items", preview.String())
	}

	ck, err := openAPI()
	if err != nil {
		t.Fatal(err)
	}
	s := e.newSession("drift")
	e.json("POST", "/v1/sessions/"+s.ID+"/messages", e.aliceKey, hello)
	ctxAnswer := e.json("GET", "/v1/sessions/"+s.ID+"/context", e.aliceKey, "")
	sessAnswer := e.json("GET", "/v1/sessions/"+s.ID, e.aliceKey, "")
	wantStatus(t, ctxAnswer, http.StatusOK)
	answer := func(path string, a *answer) openapicheck.Answer {
		return openapicheck.Answer{Method: "GET", Path: path, Status: a.status, Header: a.header.Clone(), Body: a.body}
	}
	ctxPath, sessPath := "/v1/sessions/"+s.ID+"/context", "/v1/sessions/"+s.ID
	if err := ck.Check(answer(ctxPath, ctxAnswer)); err != nil {
		t.Fatalf("the real context answer: %v", err)
	}
	asSessionMessage := answer(ctxPath, ctxAnswer)
	asSessionMessage.Body = []byte(strings.Replace(string(ctxAnswer.body), `"role":"user"`, `"session_id":"`+s.ID+`","seq":1,"role":"user"`, 1))
	undeclared := answer(sessPath, sessAnswer)
	undeclared.Status = http.StatusTeapot
	noETag := answer(sessPath, sessAnswer)
	noETag.Header.Del("ETag")
	busy := openapicheck.Answer{Method: "GET", Path: sessPath, Status: http.StatusConflict,
		Header: http.Header{"Content-Type": {"application/problem+json"}, "X-Request-Id": {"r1"}, "Cache-Control": {"no-store"}},
		Body:   []byte(`{"type":"` + wire.ProblemTypeBase + `session_busy","title":"Session busy","status":409,"detail":"d","code":"session_busy"}`)}
	for name, a := range map[string]openapicheck.Answer{"session message in a context": asSessionMessage, "status 418": undeclared, "no ETag": noETag, "409 on a read": busy} {
		if err := ck.Check(a); err == nil {
			t.Errorf("%s: accepted", name)
		} else if !strings.Contains(err.Error(), "GET /v1/sessions/{id}") {
			t.Errorf("%s: %v, want the route named", name, err)
		}
	}
}
