package httpapi_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/httpapi"
)

var wildcard = regexp.MustCompile(`\{[a-z_]+\}`)

// openAPIDoc is the part of the OpenAPI document the tests read.
type openAPIDoc struct {
	OpenAPI string                                `json:"openapi"`
	Paths   map[string]map[string]json.RawMessage `json:"paths"`
}

// The OpenAPI document and the router agree both ways: every registered route is documented, and
// every documented operation is served (neither 404 "no route" nor 405).
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	a := e.json("GET", "/openapi.json", "", "")
	wantStatus(t, a, http.StatusOK)
	doc := decodeBody[openAPIDoc](t, a)
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths {
		for method := range item {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	registered := map[string]bool{}
	for _, rt := range httpapi.Routes() {
		key := rt.Method + " " + rt.Pattern
		if registered[key] {
			t.Errorf("route %s is registered twice", key)
		}
		registered[key] = true
		if rt.Method == "GET" { // net/http serves HEAD with every GET route
			registered["HEAD "+rt.Pattern] = true
		}
	}
	for key := range registered {
		if !documented[key] {
			t.Errorf("route %s is not in the OpenAPI document", key)
		}
	}
	for key := range documented {
		if !registered[key] {
			t.Errorf("the OpenAPI document has %s, which is no route", key)
		}
		method, path, _ := strings.Cut(key, " ")
		path = wildcard.ReplaceAllString(path, "x")
		a := e.json(method, path, e.adminKey, "")
		if a.status == http.StatusMethodNotAllowed || (a.status == http.StatusNotFound && strings.HasPrefix(a.problem.Detail, "no route")) {
			t.Errorf("documented %s is not served: %d %s", key, a.status, a.body)
		}
	}
	if len(registered) < 24 {
		t.Errorf("only %d routes registered", len(registered))
	}
}

// Every $ref of the OpenAPI document resolves, and every operation has an id, a summary and a
// success answer.
func TestOpenAPIIsWellFormed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	a := e.json("GET", "/openapi.json", "", "")
	var doc map[string]any
	if err := json.Unmarshal(a.body, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	refs := 0
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				refs++
				node := any(doc)
				for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
					m, _ := node.(map[string]any)
					node = m[part]
				}
				if node == nil {
					t.Errorf("$ref %s does not resolve", ref)
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	if refs == 0 {
		t.Error("no $ref in the document")
	}
	ids := map[string]bool{}
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			op := op.(map[string]any)
			id, _ := op["operationId"].(string)
			if id == "" || ids[id] {
				t.Errorf("%s %s: operationId %q missing or repeated", method, path, id)
			}
			ids[id] = true
			if s, _ := op["summary"].(string); s == "" {
				t.Errorf("%s %s: no summary", method, path)
			}
			if _, ok := op["responses"].(map[string]any)["default"]; !ok {
				t.Errorf("%s %s: no default (problem) answer", method, path)
			}
		}
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, name := range []string{"Session", "SessionView", "Message", "ModelMessage", "ContextPreview", "Event", "ToolCall", "NewSession", "AppendRequest", "AppendResult", "WorkingMemoryState", "Problem", "User", "APIKey"} {
		if _, ok := schemas[name]; !ok {
			t.Errorf("schema %s is missing", name)
		}
	}
	// Embedded write options are flattened, as encoding/json does.
	props := schemas["AppendRequest"].(map[string]any)["properties"].(map[string]any)
	for _, p := range []string{"messages", "expected_version", "request_id"} {
		if _, ok := props[p]; !ok {
			t.Errorf("AppendRequest has no property %s: %v", p, props)
		}
	}
}

// Without a valid key every non-public route answers 401 with WWW-Authenticate; admin routes
// refuse a plain user with 403; public routes need no key.
func TestAuthOnEveryRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for _, rt := range httpapi.Routes() {
		path := wildcard.ReplaceAllString(rt.Pattern, "x")
		name := rt.Method + " " + rt.Pattern
		if rt.Auth == httpapi.AuthPublic {
			if a := e.json(rt.Method, path, "", ""); a.status != http.StatusOK {
				t.Errorf("%s without a key: %d, want 200", name, a.status)
			}
			continue
		}
		for _, auth := range []string{"", "Bearer", "Bearer ck_notakey", "Basic YWxpY2U6cHc=", "bearer " + e.aliceKey + "x"} {
			a := e.json(rt.Method, path, "", `{}`, "Authorization", auth)
			if a.status != http.StatusUnauthorized || a.problem.Code != carryon.EUNAUTHORIZED || a.problem.Detail == "" {
				t.Errorf("%s with Authorization %q: %d %s, want 401 unauthorized", name, auth, a.status, a.body)
			}
			if !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s: WWW-Authenticate = %q", name, a.header.Get("WWW-Authenticate"))
			}
		}
		if rt.Auth == httpapi.AuthAdmin {
			a := e.json(rt.Method, path, e.aliceKey, "")
			if a.status != http.StatusForbidden || a.problem.Code != carryon.EFORBIDDEN {
				t.Errorf("%s as a plain user: %d %s, want 403", name, a.status, a.body)
			}
		}
	}
}

// The route table marks session routes as session-scoped, and only those.
func TestRouteTableSessionScope(t *testing.T) {
	t.Parallel()
	for _, rt := range httpapi.Routes() {
		want := strings.HasPrefix(rt.Pattern, "/v1/sessions/{id}")
		if rt.SessionScoped != want {
			t.Errorf("%s %s: SessionScoped = %v, want %v", rt.Method, rt.Pattern, rt.SessionScoped, want)
		}
		if rt.Summary == "" {
			t.Errorf("%s %s has no summary", rt.Method, rt.Pattern)
		}
	}
}

// Someone else's session is 404 on every session route, exactly like a missing one.
func TestForeignSessionIsNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("alice's")
	for _, rt := range httpapi.Routes() {
		if !rt.SessionScoped {
			continue
		}
		path := strings.Replace(rt.Pattern, "{id}", s.ID, 1) + "?from=0&to=0"
		if !strings.HasSuffix(rt.Pattern, "/diff") {
			path = strings.Replace(rt.Pattern, "{id}", s.ID, 1)
		}
		path = strings.Replace(path, "{seq}", "1", 1)
		body := `{}`
		switch {
		case strings.HasSuffix(rt.Pattern, "/messages") && rt.Method == "POST":
			body = `{"messages":[{"role":"user","content":"hi"}]}`
		case strings.HasSuffix(rt.Pattern, "memory") && rt.Method == "PATCH":
			body = `{"patch":{"goal":"steal"}}`
		case strings.HasSuffix(rt.Pattern, "/runs") && rt.Method == "POST":
			body = `{"message":"continue"}`
		case rt.Method == "GET":
			body = ""
		}
		a := e.json(rt.Method, path, e.bobKey, body)
		missing := e.json(rt.Method, strings.Replace(path, s.ID, "sess_missing", 1), e.bobKey, body)
		if a.status != http.StatusNotFound || a.problem.Code != carryon.ENOTFOUND {
			t.Errorf("bob %s %s: %d %s, want 404", rt.Method, rt.Pattern, a.status, a.body)
		}
		if a.status != missing.status || a.problem.Title != missing.problem.Title {
			t.Errorf("%s %s: foreign answers %d, missing answers %d", rt.Method, rt.Pattern, a.status, missing.status)
		}
	}
	view := e.json("GET", "/v1/sessions/"+s.ID, e.aliceKey, "")
	if v := decodeBody[carryon.SessionView](t, view); v.Version != s.Version || v.Status != carryon.SessionActive {
		t.Errorf("bob's requests changed alice's session: %+v", v.Session)
	}
}

// Unknown paths are 404 problems; known paths with another method are 405 problems with Allow.
func TestUnknownRouteAndMethod(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	a := e.json("GET", "/v1/nothing-here", e.aliceKey, "")
	wantProblem(t, a, http.StatusNotFound, carryon.ENOTFOUND)

	a = e.json("PUT", "/v1/sessions", e.aliceKey, `{}`)
	if a.status != http.StatusMethodNotAllowed || a.header.Get("Content-Type") != "application/problem+json" || a.problem.Detail == "" {
		t.Fatalf("PUT /v1/sessions: %d %s, want a 405 problem", a.status, a.body)
	}
	allow := strings.Split(a.header.Get("Allow"), ", ")
	for _, m := range []string{"GET", "POST"} {
		if !slices.Contains(allow, m) {
			t.Errorf("Allow = %q, want %s in it", a.header.Get("Allow"), m)
		}
	}
	a = e.json("POST", "/healthz", "", "")
	if a.status != http.StatusMethodNotAllowed || !strings.Contains(a.header.Get("Allow"), "GET") {
		t.Errorf("POST /healthz: %d Allow %q", a.status, a.header.Get("Allow"))
	}
}

// TestWorkingMemoryAlias: the working memory is at /working_memory; the older /memory paths
// answer the same for one release and the OpenAPI document marks them deprecated.
func TestWorkingMemoryAlias(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("aliases")
	wantStatus(t, e.json("PATCH", "/v1/sessions/"+s.ID+"/working_memory", e.aliceKey, `{"patch":{"goal":"one word"}}`), http.StatusOK)
	cur := e.json("GET", "/v1/sessions/"+s.ID+"/working_memory", e.aliceKey, "")
	old := e.json("GET", "/v1/sessions/"+s.ID+"/memory", e.aliceKey, "")
	wantStatus(t, cur, http.StatusOK)
	if string(cur.body) != string(old.body) || !strings.Contains(string(cur.body), `"goal":"one word"`) {
		t.Fatalf("GET working_memory %s, GET memory %s", cur.body, old.body)
	}
	for _, suffix := range []string{"/history", "/diff?from=0&to=1"} {
		a, b := e.json("GET", "/v1/sessions/"+s.ID+"/working_memory"+suffix, e.aliceKey, ""), e.json("GET", "/v1/sessions/"+s.ID+"/memory"+suffix, e.aliceKey, "")
		if a.status != http.StatusOK || string(a.body) != string(b.body) {
			t.Fatalf("%s: %d %s vs %s", suffix, a.status, a.body, b.body)
		}
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Deprecated  bool   `json:"deprecated"`
			Description string `json:"description"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(httpapi.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	if op := doc.Paths["/v1/sessions/{id}/memory"]["patch"]; !op.Deprecated || !strings.Contains(op.Description, "/v1/sessions/{id}/working_memory") {
		t.Fatalf("the old path's operation: %+v", op)
	}
	if op := doc.Paths["/v1/sessions/{id}/working_memory"]["patch"]; op.Deprecated {
		t.Fatal("the current path is marked deprecated")
	}
}
