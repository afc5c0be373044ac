package a2a_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/a2a"
	"github.com/carryon-hub/carryon/internal/agents"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/model/scripted"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
	"github.com/carryon-hub/carryon/internal/users"
	"github.com/carryon-hub/carryon/store/postgres"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// testAgentsFile are the profiles of the test server: the default one and a writer whose
// write_file waits for approval before every call, and a slow one whose model takes a minute.
const testAgentsFile = `
providers:
  offline: {kind: scripted}
agents:
  default: {provider: offline}
  writer:
    provider: offline
    instructions: Write plainly.
    tools: [write_file]
    approval: {write_file: always}
  slow: {provider: offline}
`

// maxBody is the test server's body limit.
const maxBody = 64 << 10

// env is a real server (a store, the hub services, a run manager with the scripted model,
// httpapi with the A2A door mounted) and two users.
type env struct {
	t                testing.TB
	url              string
	sessions         *sessions.Service
	runs             *runs.Service
	aliceKey, bobKey string
	alice            context.Context
}

// profiles run the default profile on one engine and the writer on one that asks for approval
// of write_file.
type profiles struct {
	*agents.Set
	eng, writer, slow *engine.Engine
}

func (p profiles) Engine(_ context.Context, name string) (*engine.Engine, error) {
	if _, err := p.Agent(name); err != nil {
		return nil, err
	}
	switch name {
	case "writer":
		return p.writer, nil
	case "slow":
		return p.slow, nil
	}
	return p.eng, nil
}

// envDrivers are the stores the tests run on: SQLite always, PostgreSQL when configured.
func envDrivers(t *testing.T) map[string]func(t *testing.T) *env {
	drivers := map[string]func(t *testing.T) *env{"sqlite": func(t *testing.T) *env {
		db, err := sqlite.Open(context.Background(), ":memory:")
		if err != nil {
			t.Fatal(err)
		}
		return newEnvOn(t, db)
	}}
	if !pgtest.Enabled() {
		t.Log("PostgreSQL not configured: set " + pgtest.EnvURL + " to check it too")
		return drivers
	}
	drivers["postgres"] = func(t *testing.T) *env {
		db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		return newEnvOn(t, db)
	}
	return drivers
}

// newEnv is an env over in-memory SQLite.
func newEnv(t *testing.T) *env { return envDrivers(t)["sqlite"](t) }

func newEnvOn(t *testing.T, db store.Store) *env {
	t.Helper()
	t.Cleanup(func() { db.Close() })
	builtin := append(workspace.Tools(), tool.UpdateWorkingMemory())
	set, err := agents.Parse("agents.yaml", []byte(testAgentsFile), agents.Options{Builtin: builtin})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, sessions: sessions.New(db, sessions.Config{Agents: set})}
	us := users.New(db, nil)
	trusted := carryon.NewTrustedContext(context.Background())
	var alice *carryon.User
	if alice, e.aliceKey, err = us.CreateUser(trusted, carryon.NewUser{Name: "alice"}); err != nil {
		t.Fatal(err)
	}
	if _, e.bobKey, err = us.CreateUser(trusted, carryon.NewUser{Name: "bob"}); err != nil {
		t.Fatal(err)
	}
	e.alice = carryon.NewContextWithUser(context.Background(), alice)
	reg, err := tool.NewRegistry(builtin...)
	if err != nil {
		t.Fatal(err)
	}
	builder := contextbuild.New(contextbuild.Config{}, e.sessions, nil)
	cfg := engine.Config{Model: "scripted", Workspaces: t.TempDir()}
	eng := engine.New(cfg, scripted.New(0), reg, builder)
	cfg.Approval = func(tool string) bool { return tool == "write_file" }
	writer := engine.New(cfg, scripted.New(0), reg, builder)
	cfg.Approval = nil
	slow := engine.New(cfg, scripted.New(time.Minute), reg, builder)
	e.runs = runs.New(db, e.sessions, nil, runs.Config{Poll: 50 * time.Millisecond, Agents: profiles{set, eng, writer, slow}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.runs.Work(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	srv := httptest.NewServer(httpapi.NewServer(httpapi.Config{
		Sessions: e.sessions, Users: us, Runs: e.runs, Agents: set, MaxBodyBytes: maxBody,
		Doors: []httpapi.FrontDoor{a2a.New(a2a.Config{Sessions: e.sessions, Runs: e.runs, Agents: set, MaxBodyBytes: maxBody, KeepAlive: 50 * time.Millisecond})},
	}))
	t.Cleanup(srv.Close)
	e.url = srv.URL
	return e
}

// answer is an HTTP answer with its body read and, when it is JSON-RPC, decoded.
type answer struct {
	status int
	header http.Header
	body   []byte
	rpc    struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
}

// post sends body to path with key ("" for none).
func (e *env) post(path, key, body string, header ...string) *answer {
	e.t.Helper()
	req, err := http.NewRequest("POST", e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return e.send(req)
}

// get reads path without a key.
func (e *env) get(path string) *answer {
	e.t.Helper()
	req, err := http.NewRequest("GET", e.url+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.send(req)
}

func (e *env) send(req *http.Request) *answer {
	e.t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	a := &answer{status: res.StatusCode, header: res.Header, body: b}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(b, &a.rpc); err != nil {
			e.t.Fatalf("answer %s: %v", b, err)
		}
	}
	return a
}

// call sends a JSON-RPC request of method with params (a JSON string) as alice or bob (key).
func (e *env) call(path, key, method, params string) *answer {
	e.t.Helper()
	return e.post(path, key, `{"jsonrpc":"2.0","id":"req-1","method":"`+method+`","params":`+params+`}`)
}

// wantError checks that a is a JSON-RPC error with code, echoing id, at HTTP status.
func wantError(t *testing.T, a *answer, status, code int) {
	t.Helper()
	if a.status != status || a.rpc.JSONRPC != "2.0" || a.rpc.Error == nil || a.rpc.Error.Code != code || a.rpc.Error.Message == "" || a.rpc.Result != nil {
		t.Fatalf("answer = %d %s; want HTTP %d with JSON-RPC error %d and a message", a.status, a.body, status, code)
	}
}

// task is the part of an A2A 1.0 task the tests read.
type task struct {
	ID        string `json:"id"`
	ContextID string `json:"contextId"`
	Status    struct {
		State   string `json:"state"`
		Message *struct {
			Parts []struct {
				Text *string         `json:"text"`
				Data json.RawMessage `json:"data"`
			} `json:"parts"`
		} `json:"message"`
	} `json:"status"`
	Artifacts []struct {
		ArtifactID string `json:"artifactId"`
		Parts      []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"artifacts"`
}

// reply is the text of the task's reply artifact.
func (tk task) reply() string {
	for _, a := range tk.Artifacts {
		if a.ArtifactID == "reply" && len(a.Parts) > 0 {
			return a.Parts[0].Text
		}
	}
	return ""
}

// sent decodes the result of a SendMessage ({"task": …}).
func sent(t *testing.T, a *answer) task {
	t.Helper()
	var r struct {
		Task *task `json:"task"`
	}
	if a.status != 200 || a.rpc.Error != nil || json.Unmarshal(a.rpc.Result, &r) != nil || r.Task == nil {
		t.Fatalf("send answered %d %s", a.status, a.body)
	}
	return *r.Task
}

// gotTask decodes the result of GetTask or CancelTask (a task).
func gotTask(t *testing.T, a *answer) task {
	t.Helper()
	var tk task
	if a.status != 200 || a.rpc.Error != nil || json.Unmarshal(a.rpc.Result, &tk) != nil || tk.ID == "" {
		t.Fatalf("answer %d %s", a.status, a.body)
	}
	return tk
}

// sendParams are the params of a send of text with messageId id and extra message fields.
func sendParams(id, text, extra string) string {
	m := map[string]any{"messageId": id, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	b, _ := json.Marshal(map[string]any{"message": m})
	if extra != "" {
		b = bytes.Replace(b, []byte(`"messageId"`), []byte(extra+`,"messageId"`), 1)
	}
	return string(b)
}

// userMessages are the user messages of alice's session id.
func (e *env) userMessages(id string) []string {
	e.t.Helper()
	page, err := e.sessions.ListMessages(e.alice, id, carryon.MessageFilter{Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, m := range page.Items {
		if m.Role == carryon.RoleUser {
			out = append(out, m.Content)
		}
	}
	return out
}
