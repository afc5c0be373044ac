package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/client"
	"github.com/carryon-hub/carryon/internal/agents"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/extraction"
	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/limits"
	"github.com/carryon-hub/carryon/internal/longterm"
	"github.com/carryon-hub/carryon/internal/model/scripted"
	"github.com/carryon-hub/carryon/internal/openapicheck"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/schedules"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/longtermtool"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
	"github.com/carryon-hub/carryon/internal/users"
	"github.com/carryon-hub/carryon/internal/webhooks"
	"github.com/carryon-hub/carryon/internal/wire"
	"github.com/carryon-hub/carryon/store/postgres"
	"github.com/carryon-hub/carryon/store/sqlite"
	"github.com/prometheus/client_golang/prometheus"
)

// env is a real server over the real services and an in-memory SQLite store.
type env struct {
	t        testing.TB
	srv      *httptest.Server
	handler  http.Handler // the server's handler, for in-process requests
	http     *http.Client // the client of srv; it checks every answer against the OpenAPI document
	sessions *sessions.Service
	users    *users.Service
	longTerm *longterm.Service
	adminKey string // an admin user's key
	aliceKey string // a plain user's key
	bobKey   string // another plain user's key
	logs     *syncBuffer
	agents   *agents.Set
	// workspaces holds the sessions' workspaces, where the runs' file tools write.
	workspaces string
	// summaries is the model compactions ask for summaries.
	summaries *summaryModel
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newEnv starts a server; change adjusts its Config (e.g. to wrap the services).
func newEnv(t testing.TB, change func(*httpapi.Config)) *env {
	t.Helper()
	return newEnvWith(t, envOptions{}, change)
}

// envOptions shape the test server beyond its Config.
type envOptions struct {
	// approvals makes the writer profile's write_file ask for approval before every call, as the
	// profile says (approval: {write_file: always}); without it the writer's runs call it at once.
	approvals bool
}

// newEnvWith starts a server shaped by opt over an in-memory store.
func newEnvWith(t testing.TB, opt envOptions, change func(*httpapi.Config)) *env {
	t.Helper()
	db, err := sqlite.Open(context.Background(), ":memory:")
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	return newEnvOnWith(t, db, opt, change)
}

// newEnvOn starts a server over the store db, which it closes when the test ends.
func newEnvOn(t testing.TB, db store.Store, change func(*httpapi.Config)) *env {
	t.Helper()
	return newEnvOnWith(t, db, envOptions{}, change)
}

// newEnvOnWith is newEnvOn shaped by opt.
func newEnvOnWith(t testing.TB, db store.Store, opt envOptions, change func(*httpapi.Config)) *env {
	t.Helper()
	ctx := context.Background()
	var err error
	t.Cleanup(func() { db.Close() })
	builtin := append(append(workspace.Tools(), tool.UpdateWorkingMemory()), longtermtool.Tools()...)
	profiles, err := agents.Parse("agents.yaml", []byte(testAgentsFile), agents.Options{Builtin: builtin})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, sessions: sessions.New(db, sessions.Config{Agents: profiles}), users: users.New(db, nil), longTerm: longterm.New(db, nil), logs: &syncBuffer{}, agents: profiles, summaries: &summaryModel{}}
	e.users.ForgetWith(e.sessions)
	trusted := carryon.NewTrustedContext(ctx)
	for _, u := range []struct {
		name  string
		admin bool
		key   *string
	}{{"admin", true, &e.adminKey}, {"alice", false, &e.aliceKey}, {"bob", false, &e.bobKey}} {
		if _, *u.key, err = e.users.CreateUser(trusted, carryon.NewUser{Name: u.name, Admin: u.admin}); err != nil {
			t.Fatalf("create user %s: %v", u.name, err)
		}
	}
	reg, err := tool.NewRegistry(builtin...)
	if err != nil {
		t.Fatal(err)
	}
	builder := contextbuild.New(contextbuild.Config{LongTerm: true}, e.sessions, nil)
	compactor := contextbuild.New(contextbuild.Config{}, e.sessions, contextbuild.ModelSummarizer{Provider: e.summaries, Model: "scripted"})
	e.workspaces = t.TempDir()
	engCfg := engine.Config{Model: "scripted", Workspaces: e.workspaces, LongTerm: e.longTerm}
	eng := engine.New(engCfg, scripted.New(0), reg, builder)
	writer := eng
	if opt.approvals {
		engCfg.Approval = func(tool string) bool { return tool == "write_file" } // the writer's approval: {write_file: always}
		writer = engine.New(engCfg, scripted.New(0), reg, builder)
	}
	rs := runs.New(db, e.sessions, nil, runs.Config{Poll: 50 * time.Millisecond, Agents: testAgents{profiles, eng, writer}})
	workCtx, stopWork := context.WithCancel(ctx)
	worked := make(chan struct{})
	go func() { rs.Work(workCtx); close(worked) }()
	t.Cleanup(func() { stopWork(); <-worked })
	cfg := httpapi.Config{
		Sessions:  e.sessions,
		Users:     e.users,
		Runs:      rs,
		LongTerm:  e.longTerm,
		Webhooks:  webhooks.NewService(db, webhooks.Policy{AllowHTTP: true, AllowPrivate: true}, nil, nil),
		Agents:    profiles,
		Schedules: schedules.New(db, rs, schedules.Config{}),
		Context: func(ctx context.Context, id string) (*carryon.ContextPreview, error) {
			return builder.Preview(ctx, id, "scripted")
		},
		Compact: func(ctx context.Context, id string, in carryon.CompactInput) (*carryon.Compaction, error) {
			return e.sessions.Compact(ctx, id, in, func(ctx context.Context) (carryon.NewMessage, error) {
				plan, err := compactor.Compact(ctx, id, "scripted", in.KeepLast, in.Instructions)
				if err != nil {
					return carryon.NewMessage{}, err
				}
				return plan.Summary, nil
			})
		},
		Compactions: e.sessions.ListCompactions,
		Export:      e.sessions.Export,
		Storage:     e.sessions.Storage,
		Import:      e.sessions.Import,
		// Facts learned by the scripted model, which answers no facts JSON: 503, nothing written.
		Extract: extraction.New(db, e.longTerm, func(string) (extraction.Learner, bool) {
			return extraction.Learner{Provider: scripted.New(0), Model: "scripted"}, true
		}).Extract,
		Logger:   slog.New(slog.NewJSONHandler(e.logs, nil)),
		Ready:    db.Ping,
		Registry: prometheus.NewRegistry(),
	}
	if change != nil {
		change(&cfg)
	}
	if cfg.Limits == nil {
		cfg.Limits = limits.New(limits.Config{Store: db, Defaults: httpapi.DefaultLimits(cfg.MaxRequestsPerUser, cfg.MaxStreamsPerUser)})
	}
	e.handler = httpapi.NewServer(cfg)
	e.srv = httptest.NewServer(e.handler)
	e.http = checkedClient(t, e.srv.Client())
	t.Cleanup(e.srv.Close)
	return e
}

// openAPI is the server's OpenAPI document, compiled once for every test.
var openAPI = sync.OnceValues(func() (*openapicheck.Checker, error) { return openapicheck.New(httpapi.OpenAPI()) })

// checkedClient returns a copy of c whose every answer is checked against the OpenAPI document; a
// mismatch fails t (until t ends: streams read after that are not t's).
func checkedClient(t testing.TB, c *http.Client) *http.Client {
	t.Helper()
	ck, err := openAPI()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	done := false
	t.Cleanup(func() { mu.Lock(); done = true; mu.Unlock() })
	checked := *c
	checked.Transport = ck.Transport(c.Transport, func(_ *http.Request, err error) {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			t.Errorf("%v", err)
		}
	})
	return &checked
}

// checkRecorded checks an answer served in process against the OpenAPI document.
func checkRecorded(t testing.TB, r *http.Request, w *httptest.ResponseRecorder) {
	t.Helper()
	ck, err := openAPI()
	if err != nil {
		t.Fatal(err)
	}
	if err := ck.Check(openapicheck.Answer{Method: r.Method, Path: r.URL.EscapedPath(), Status: w.Code, Header: w.Result().Header, Body: w.Body.Bytes()}); err != nil {
		t.Errorf("%v", err)
	}
}

// testAgentsFile are the agent profiles of the test server: the default one and a writer, both
// scripted (the run's engine is the same; what differs is what sessions and runs record).
const testAgentsFile = `
providers:
  offline: {kind: scripted}
agents:
  default: {provider: offline}
  writer:
    provider: offline
    model: scripted-writer
    instructions: Write plainly.
    tools: [write_file, update_working_memory]
    approval: {write_file: always}
`

// testAgents runs the profiles of a set with one engine, the writer with its own (one whose
// write_file asks for approval before every call, with envOptions.approvals).
type testAgents struct {
	*agents.Set
	eng, writer *engine.Engine
}

func (a testAgents) Engine(_ context.Context, name string) (*engine.Engine, error) {
	if _, err := a.Agent(name); err != nil {
		return nil, err
	}
	if name == "writer" {
		return a.writer, nil
	}
	return a.eng, nil
}

// client returns a Client of the server with key.
func (e *env) client(key string) *client.Client {
	return client.New(e.srv.URL, key, client.WithHTTPClient(e.http))
}

// answer is a response with its body read.
type answer struct {
	status  int
	header  http.Header
	body    []byte
	problem wire.Problem
}

// req is a raw request: method, path, key, body and header pairs. A body is sent as JSON unless a
// Content-Type pair says otherwise.
type req struct {
	method, path, key string
	body              io.Reader
	header            []string
}

// do sends r and reads the answer; a problem body is decoded into answer.problem.
func (e *env) do(r req) *answer {
	e.t.Helper()
	hr, err := http.NewRequest(r.method, e.srv.URL+r.path, r.body)
	if err != nil {
		e.t.Fatal(err)
	}
	if r.body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if r.key != "" {
		hr.Header.Set("Authorization", "Bearer "+r.key)
	}
	for i := 0; i+1 < len(r.header); i += 2 {
		if r.header[i+1] == "" {
			hr.Header.Del(r.header[i])
		} else {
			hr.Header.Set(r.header[i], r.header[i+1])
		}
	}
	resp, err := e.http.Do(hr)
	if err != nil {
		e.t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: read body: %v", r.method, r.path, err)
	}
	a := &answer{status: resp.StatusCode, header: resp.Header, body: body}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") && len(body) > 0 { // HEAD: no body
		if err := json.Unmarshal(body, &a.problem); err != nil {
			e.t.Fatalf("%s %s: problem body %q: %v", r.method, r.path, body, err)
		}
	}
	return a
}

// json sends a JSON body given as a string.
func (e *env) json(method, path, key, body string, header ...string) *answer {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	return e.do(req{method: method, path: path, key: key, body: rd, header: header})
}

// wantProblem checks that a is a problem with the status and code, a non-empty detail, and the
// problem+json media type.
func wantProblem(t testing.TB, a *answer, status int, code string) {
	t.Helper()
	if a.status != status {
		t.Fatalf("status = %d, want %d; body %s", a.status, status, a.body)
	}
	if ct := a.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json; body %s", ct, a.body)
	}
	p := a.problem
	if p.Code != code || p.Status != status || p.Detail == "" || p.Title == "" || !strings.HasSuffix(p.Type, code) {
		t.Fatalf("problem = %+v, want code %s, status %d, a title, a detail and a type", p, code, status)
	}
}

// wantStatus checks the status of a.
func wantStatus(t testing.TB, a *answer, status int) {
	t.Helper()
	if a.status != status {
		t.Fatalf("status = %d, want %d; body %s", a.status, status, a.body)
	}
}

// decodeBody decodes a JSON answer.
func decodeBody[T any](t testing.TB, a *answer) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(a.body, &v); err != nil {
		t.Fatalf("decode %s: %v", a.body, err)
	}
	return v
}

// newSession makes a session of the alice user over HTTP and returns it.
func (e *env) newSession(title string) *carryon.Session {
	e.t.Helper()
	a := e.json("POST", "/v1/sessions", e.aliceKey, `{"title":"`+title+`"}`)
	wantStatus(e.t, a, http.StatusCreated)
	s := decodeBody[carryon.Session](e.t, a)
	return &s
}

// ctx returns a context that ends with the test.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// envDrivers returns how to start an env on each store the tests run on: SQLite always,
// PostgreSQL when pgtest is configured (else the test says it checked SQLite only).
func envDrivers(t *testing.T) map[string]func(t *testing.T) *env {
	drivers := map[string]func(t *testing.T) *env{"sqlite": func(t *testing.T) *env { return newEnv(t, nil) }}
	if !pgtest.Enabled() {
		t.Log("PostgreSQL not configured: set " + pgtest.EnvURL + " to check it too")
		return drivers
	}
	drivers["postgres"] = func(t *testing.T) *env {
		db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		return newEnvOn(t, db, nil)
	}
	return drivers
}
