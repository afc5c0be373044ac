package httpapi_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/wire"
)

// Every error code has its one status.
func TestStatusOfEveryCode(t *testing.T) {
	t.Parallel()
	want := map[string]int{
		carryon.EINVALID: 400, carryon.EUNAUTHORIZED: 401, carryon.EFORBIDDEN: 403, carryon.ENOTFOUND: 404,
		carryon.EVERSION: 409, carryon.EINFLIGHT: 409, carryon.EKEYREUSED: 422, carryon.EBUSY: 409,
		carryon.ECLOSED: 409, carryon.EEXPIRED: 410, carryon.ECONFLICT: 409, "run_fenced": 409, carryon.EVERSIONNEEDED: 428,
		carryon.ETOOLARGE: 413, carryon.EUNSUPPORTED: 415, carryon.EINTERNAL: 500, carryon.EUNAVAILABLE: 503,
		carryon.ENOTIMPLEMENTED: 501, "no_such_code": 500,
	}
	for code, status := range want {
		if got := wire.StatusOf(code); got != status {
			t.Errorf("StatusOf(%s) = %d, want %d", code, got, status)
		}
	}
}

// faultySessions is the real service with AppendMessages replaced by a failure.
type faultySessions struct {
	carryon.SessionService
	fail func() error
}

func (f faultySessions) AppendMessages(ctx context.Context, id string, in carryon.AppendInput) (*carryon.AppendResult, error) {
	return nil, f.fail()
}

// Errors the services return reach the client as problems with their hints; internal errors are
// logged and never leak; a panic is a 500 problem.
func TestServiceErrorsBecomeProblems(t *testing.T) {
	t.Parallel()
	var fail func() error
	e := newEnv(t, func(c *httpapi.Config) { c.Sessions = faultySessions{c.Sessions, func() error { return fail() }} })
	s := e.newSession("faults")
	path := "/v1/sessions/" + s.ID + "/messages"

	fail = func() error {
		return &carryon.Error{Code: carryon.EBUSY, Message: "a run is active", ActiveRunID: "run_1", RetryAfterSeconds: 3}
	}
	// An append never answers session_busy (a run start does), so the OpenAPI document rightly
	// does not declare it here: these two answers bypass the check of the document.
	checked := e.http
	e.http = e.srv.Client()
	a := e.json("POST", path, e.aliceKey, hello)
	wantProblem(t, a, http.StatusConflict, carryon.EBUSY)
	if a.problem.ActiveRunID != "run_1" || a.header.Get("Retry-After") != "3" || a.problem.Instance != path {
		t.Errorf("busy problem %+v, Retry-After %q", a.problem, a.header.Get("Retry-After"))
	}
	_, err := e.client(e.aliceKey).AppendMessages(ctx(t), s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{{Role: "user", Content: "x"}}})
	if ce := wantCode(t, err, carryon.EBUSY); ce.ActiveRunID != "run_1" || ce.RetryAfterSeconds != 3 {
		t.Errorf("client error %+v", ce)
	}
	e.http = checked

	fail = func() error { return carryon.Errorf(carryon.EINFLIGHT, "still going") }
	a = e.json("POST", path, e.aliceKey, hello)
	wantProblem(t, a, http.StatusConflict, carryon.EINFLIGHT)
	if a.header.Get("Retry-After") == "" {
		t.Error("request_in_flight without Retry-After")
	}

	fail = func() error { return carryon.Errorf(carryon.EEXPIRED, "expired") }
	wantProblem(t, e.json("POST", path, e.aliceKey, hello), http.StatusGone, carryon.EEXPIRED)

	fail = func() error { return errors.New("sqlite: disk I/O error at /secret/path/carryon.db") }
	a = e.json("POST", path, e.aliceKey, hello, "X-Request-Id", "trace-123")
	wantProblem(t, a, http.StatusInternalServerError, carryon.EINTERNAL)
	if strings.Contains(string(a.body), "secret") || strings.Contains(string(a.body), "sqlite") {
		t.Errorf("internal error leaked: %s", a.body)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "/secret/path/carryon.db") || !strings.Contains(logs, "trace-123") {
		t.Errorf("internal error not logged with its request id:\n%s", logs)
	}

	fail = func() error { panic("boom") }
	a = e.json("POST", path, e.aliceKey, hello)
	wantProblem(t, a, http.StatusInternalServerError, carryon.EINTERNAL)
	if strings.Contains(string(a.body), "boom") {
		t.Errorf("panic leaked: %s", a.body)
	}
	if !strings.Contains(e.logs.String(), "boom") {
		t.Error("panic not logged")
	}
	// The server still serves.
	wantStatus(t, e.json("GET", "/v1/sessions/"+s.ID, e.aliceKey, ""), http.StatusOK)
}

// /readyz answers 503 while the readiness check fails; /healthz stays 200.
func TestReadiness(t *testing.T) {
	t.Parallel()
	var notReady error
	e := newEnv(t, func(c *httpapi.Config) { c.Ready = func(context.Context) error { return notReady } })
	wantStatus(t, e.json("GET", "/readyz", "", ""), http.StatusOK)
	notReady = errors.New("database locked at /secret")
	a := e.json("GET", "/readyz", "", "")
	wantProblem(t, a, http.StatusServiceUnavailable, carryon.EUNAVAILABLE)
	if strings.Contains(string(a.body), "secret") {
		t.Errorf("readiness error leaked: %s", a.body)
	}
	wantStatus(t, e.json("GET", "/healthz", "", ""), http.StatusOK)
}

// Metrics are labelled by route pattern, never by raw path; every request is logged once with
// its route, status, user and request id, and the request id is echoed.
func TestMetricsAndLogs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("metrics")
	a := e.json("GET", "/v1/sessions/"+s.ID, e.aliceKey, "", "X-Request-Id", "abc-1")
	if a.header.Get("X-Request-Id") != "abc-1" {
		t.Errorf("X-Request-Id = %q, want it echoed", a.header.Get("X-Request-Id"))
	}
	if id := e.json("GET", "/healthz", "", "", "X-Request-Id", "bad id\twith tab").header.Get("X-Request-Id"); id == "" || strings.Contains(id, " ") {
		t.Errorf("generated X-Request-Id = %q", id)
	}
	e.json("GET", "/v1/no-such-thing/"+s.ID, e.aliceKey, "")
	resp, err := e.http.Get(e.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := string(body)
	for _, want := range []string{
		`carryon_http_requests_total{method="POST",route="/v1/sessions",status="201"} 1`,
		`carryon_http_requests_total{method="GET",route="/v1/sessions/{id}",status="200"} 1`,
		`carryon_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`carryon_http_request_duration_seconds_bucket{method="GET",route="/v1/sessions/{id}",le="+Inf"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(m, s.ID) {
		t.Error("a raw session id is in the metrics")
	}
	logs := e.logs.String()
	me := mustUser(t, e, e.aliceKey)
	var line string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, `"http_request_id":"abc-1"`) {
			line = l
		}
	}
	for _, want := range []string{`"route":"/v1/sessions/{id}"`, `"status":200`, `"user_id":"` + me.ID + `"`, `"method":"GET"`, `"duration"`} {
		if !strings.Contains(line, want) {
			t.Errorf("log line %q lacks %s", line, want)
		}
	}
}
