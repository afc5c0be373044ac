package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/wire"
)

// Every malformed body is refused with a 4xx problem that says what is wrong, and nothing is
// written.
func TestDecodingRefusesBadBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("decode")
	path := "/v1/sessions/" + s.ID + "/messages"
	tests := []struct {
		name       string
		body       string
		header     []string
		status     int
		code       string
		detailHas  string
		targetPath string
	}{
		{name: "malformed JSON", body: `{"messages": [`, status: 400, code: carryon.EINVALID, detailHas: "malformed JSON"},
		{name: "syntax error", body: `{"messages": [}`, status: 400, code: carryon.EINVALID, detailHas: "byte"},
		{name: "unknown field", body: `{"messages": [], "mesages": []}`, status: 400, code: carryon.EINVALID, detailHas: `"mesages"`},
		{name: "unknown nested field", body: `{"messages": [{"role":"user","content":"x","colour":1}]}`, status: 400, code: carryon.EINVALID, detailHas: `"colour"`},
		{name: "wrong type", body: `{"messages": [{"role":"user","content":5}]}`, status: 400, code: carryon.EINVALID, detailHas: `"messages.content" must be a string, not number`},
		{name: "wrong type of version", body: `{"messages": [], "expected_version": "3"}`, status: 400, code: carryon.EINVALID, detailHas: `"expected_version" must be an integer`},
		{name: "not an object", body: `[1,2]`, status: 400, code: carryon.EINVALID, detailHas: "must be an object in JSON, not array"},
		{name: "invalid UTF-8", body: "{\"messages\": [{\"role\":\"user\",\"content\":\"\xff\xfe\"}]}", status: 400, code: carryon.EINVALID, detailHas: "UTF-8"},
		{name: "trailing data", body: `{"messages": []} {"messages": []}`, status: 400, code: carryon.EINVALID, detailHas: "exactly one JSON value"},
		{name: "trailing garbage", body: `{"messages": []}}`, status: 400, code: carryon.EINVALID, detailHas: "exactly one JSON value"},
		{name: "empty body", body: ``, status: 400, code: carryon.EINVALID, detailHas: "body is required"},
		{name: "form content type", body: `{"messages": []}`, header: []string{"Content-Type", "application/x-www-form-urlencoded"}, status: 415, code: carryon.EUNSUPPORTED, detailHas: "application/json"},
		{name: "no content type", body: `{"messages": []}`, header: []string{"Content-Type", ""}, status: 415, code: carryon.EUNSUPPORTED, detailHas: "no Content-Type"},
		{name: "latin-1 charset", body: `{"messages": []}`, header: []string{"Content-Type", "application/json; charset=iso-8859-1"}, status: 415, code: carryon.EUNSUPPORTED, detailHas: "UTF-8"},
		{name: "merge patch where JSON is due", body: `{"messages": []}`, header: []string{"Content-Type", "application/merge-patch+json"}, status: 415, code: carryon.EUNSUPPORTED, detailHas: "application/json"},
		{name: "memory patch unknown field", targetPath: "/memory", body: `{"patch": {}, "pach": {}}`, status: 400, code: carryon.EINVALID, detailHas: `"pach"`},
		{name: "memory patch missing patch", targetPath: "/memory", body: `{"expected_version": 1}`, status: 400, code: carryon.EINVALID, detailHas: `"patch"`},
		{name: "bare merge patch trailing data", targetPath: "/memory", body: `{"goal":"x"} 1`, header: []string{"Content-Type", "application/merge-patch+json"}, status: 400, code: carryon.EINVALID, detailHas: "exactly one JSON value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method, p := "POST", path
			if tt.targetPath != "" {
				method, p = "PATCH", "/v1/sessions/"+s.ID+tt.targetPath
			}
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			a := e.do(req{method: method, path: p, key: e.aliceKey, body: body, header: tt.header})
			wantProblem(t, a, tt.status, tt.code)
			if !strings.Contains(a.problem.Detail, tt.detailHas) {
				t.Errorf("detail %q does not mention %q", a.problem.Detail, tt.detailHas)
			}
		})
	}
	view, err := e.sessions.Get(carryon.NewContextWithUser(ctx(t), mustUser(t, e, e.aliceKey)), s.ID, carryon.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if view.Version != s.Version || view.MessageCount != 0 || len(view.WorkingMemory) != 0 {
		t.Errorf("refused requests wrote something: version %d→%d, %d messages, memory %v", s.Version, view.Version, view.MessageCount, view.WorkingMemory)
	}
}

// A body over the limit is refused with 413, whether its length is announced or streamed.
func TestDecodingRefusesLargeBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("large")
	big := `{"messages":[{"role":"user","content":"` + strings.Repeat("a", 40<<20) + `"}]}`
	t.Run("content-length", func(t *testing.T) {
		a := e.do(req{method: "POST", path: "/v1/sessions/" + s.ID + "/messages", key: e.aliceKey, body: bytes.NewReader([]byte(big))})
		wantProblem(t, a, http.StatusRequestEntityTooLarge, carryon.ETOOLARGE)
	})
	t.Run("chunked", func(t *testing.T) {
		// io.MultiReader hides the length, so the client streams the body chunked.
		a := e.do(req{method: "POST", path: "/v1/sessions/" + s.ID + "/messages", key: e.aliceKey, body: io.MultiReader(strings.NewReader(big))})
		wantProblem(t, a, http.StatusRequestEntityTooLarge, carryon.ETOOLARGE)
	})
	t.Run("just under a small limit", func(t *testing.T) {
		e := newEnv(t, func(c *httpapi.Config) { c.MaxBodyBytes = 200 })
		s := e.newSession("small")
		ok := `{"messages":[{"role":"user","content":"` + strings.Repeat("a", 100) + `"}]}`
		wantStatus(t, e.json("POST", "/v1/sessions/"+s.ID+"/messages", e.aliceKey, ok), http.StatusCreated)
		tooBig := `{"messages":[{"role":"user","content":"` + strings.Repeat("a", 200) + `"}]}`
		wantProblem(t, e.json("POST", "/v1/sessions/"+s.ID+"/messages", e.aliceKey, tooBig), http.StatusRequestEntityTooLarge, carryon.ETOOLARGE)
	})
}

// Query parameters are validated: unknown, repeated, malformed and out-of-range values are 400.
func TestQueryParametersAreValidated(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("query")
	for _, q := range []string{
		"/v1/sessions?limit=0", "/v1/sessions?limit=1001", "/v1/sessions?limit=ten", "/v1/sessions?limit=-1",
		"/v1/sessions?limt=5", "/v1/sessions?limit=1&limit=2", "/v1/sessions?status=sleeping",
		"/v1/sessions/" + s.ID + "?messages=-2", "/v1/sessions/" + s.ID + "/messages?after_seq=x",
		"/v1/sessions/" + s.ID + "/memory/diff?from=0", "/v1/sessions/" + s.ID + "/memory/history?before=0",
		"/v1/sessions?%zz",
	} {
		a := e.json("GET", q, e.aliceKey, "")
		wantProblem(t, a, http.StatusBadRequest, carryon.EINVALID)
	}
	for _, q := range []string{"/v1/sessions?limit=1000&status=active", "/v1/sessions/" + s.ID + "?messages=0", "/v1/sessions/" + s.ID + "/messages?after_seq=0&limit=1"} {
		wantStatus(t, e.json("GET", q, e.aliceKey, ""), http.StatusOK)
	}
}

// mustUser authenticates a key with the real user service.
func mustUser(t *testing.T, e *env, key string) *carryon.User {
	t.Helper()
	u, err := e.users.Authenticate(ctx(t), key)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Whatever bytes arrive as an append body, the answer is 201 or a 4xx problem with a detail;
// never a 5xx. Run it with -fuzzminimizetime 10x: the services' background work makes coverage
// noisy, and the default minimisation of every "interesting" input then stalls the fuzzer.
func FuzzAppendBody(f *testing.F) {
	for _, seed := range []string{
		hello, `{}`, `null`, `[]`, `{"messages":null}`, `{"messages":[{"role":"robot","content":""}]}`,
		`{"messages":[{"role":"user","content":"x"}],"expected_version":-1}`, `{"messages":[],"request_id":"\u0000"}`,
		"{\"messages\":[{\"role\":\"user\",\"content\":\"\xc3\x28\"}]}", `{"messages":[{"role":"user","content":"x","tool_calls":{"a":1}}]}`,
	} {
		f.Add([]byte(seed))
	}
	shared := newEnv(f, nil)
	s := shared.newSession("fuzz")
	f.Fuzz(func(t *testing.T, body []byte) {
		// In process, without the network: the fuzzer then sees the decoder's coverage, not the
		// connection handling's.
		r := httptest.NewRequest("POST", "/v1/sessions/"+s.ID+"/messages", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+shared.aliceKey)
		w := httptest.NewRecorder()
		shared.handler.ServeHTTP(w, r)
		checkRecorded(t, r, w)
		if w.Code == http.StatusCreated {
			return
		}
		var p wire.Problem
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || w.Code < 400 || w.Code >= 500 || p.Detail == "" || p.Code == "" {
			t.Fatalf("body %q: %d %s", body, w.Code, w.Body.Bytes())
		}
	})
}
