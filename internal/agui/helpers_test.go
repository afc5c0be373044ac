package agui_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/agui"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/testtools"
	"github.com/carryon-hub/carryon/internal/users"
	"github.com/carryon-hub/carryon/store/postgres"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// fakeModel answers by the last user message: with the client tool get_weather offered and
// "weather" asked, it calls it (call_w1); with "remember X", it calls update_working_memory
// (goal X, a plan step); with "count", it calls test_tally (which asks for approval); given tool
// results it answers "Done: " and them; otherwise "You said: <text> (<n> user messages)" in
// several deltas.
type fakeModel struct{}

func (fakeModel) Name() string { return "fake" }

func (fakeModel) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		var results []string
		for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == model.RoleTool; i-- {
			results = append([]string{req.Messages[i].Content}, results...)
		}
		if len(results) > 0 {
			yield(model.Chunk{Delta: "Done: " + strings.Join(results, " | "), FinishReason: model.FinishStop}, nil)
			return
		}
		users, last := 0, ""
		for _, msg := range req.Messages {
			if msg.Role == model.RoleUser {
				users, last = users+1, msg.Content
			}
		}
		call := func(id, name, args string) {
			yield(model.Chunk{ToolCalls: []model.ToolCall{{ID: id, Name: name, Arguments: json.RawMessage(args)}}, FinishReason: model.FinishToolCalls}, nil)
		}
		offered := map[string]bool{}
		for _, t := range req.Tools {
			offered[t.Name] = true
		}
		switch {
		case strings.Contains(last, "hang"):
			<-ctx.Done() // a model that takes forever, until the run is stopped
			yield(model.Chunk{}, ctx.Err())
			return
		case offered["get_weather"] && strings.Contains(last, "weather"):
			call("call_w1", "get_weather", `{"city":"Oslo"}`)
			return
		case strings.HasPrefix(last, "remember "):
			goal, _ := json.Marshal(strings.TrimPrefix(last, "remember "))
			call("call_m1", "update_working_memory", `{"patch":{"goal":`+string(goal)+`,"plan":[{"title":"a/b~c","status":"todo"}],"notes":null}}`)
			return
		case strings.Contains(last, "count"):
			call("call_t1", "test_tally", `{}`)
			return
		}
		reply := fmt.Sprintf("You said: %s (%d user messages)", last, users)
		words := strings.SplitAfter(reply, " ")
		for i, w := range words {
			c := model.Chunk{Delta: w}
			if i == len(words)-1 {
				c.FinishReason = model.FinishStop
			}
			if !yield(c, nil) {
				return
			}
		}
	}
}

// profiles is the one agent profile of the tests' servers.
type profiles struct{ eng *engine.Engine }

func (p profiles) Agent(name string) (*carryon.Agent, error) {
	if name == "" || name == carryon.DefaultAgent {
		return &carryon.Agent{Name: carryon.DefaultAgent, Model: "fake-model", Tools: []carryon.AgentTool{}}, nil
	}
	return nil, carryon.Errorf(carryon.EINVALID, "agent %q is not a profile of this server", name)
}

func (p profiles) Engine(_ context.Context, name string) (*engine.Engine, error) {
	if _, err := p.Agent(name); err != nil {
		return nil, err
	}
	return p.eng, nil
}

// env is a real server (httpapi with the AG-UI door mounted) over one store, and two users.
type env struct {
	url              string
	sessions         *sessions.Service
	runs             *runs.Service
	aliceKey, bobKey string
	alice            context.Context
	// streamsDone, closed, ends the door's open streams (a server shutting down).
	streamsDone chan struct{}
}

// drivers returns how to start an env on each store: SQLite always, PostgreSQL when
// CARRYON_TEST_POSTGRES_URL is set (else the test says it checked SQLite only).
func drivers(t *testing.T) map[string]func(t *testing.T) *env {
	d := map[string]func(t *testing.T) *env{"sqlite": func(t *testing.T) *env {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "carryon.db"))
		if err != nil {
			t.Fatal(err)
		}
		return newEnv(t, db)
	}}
	if !pgtest.Enabled() {
		t.Log("PostgreSQL not configured: set " + pgtest.EnvURL + " to check it too")
		return d
	}
	d["postgres"] = func(t *testing.T) *env {
		db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		return newEnv(t, db)
	}
	return d
}

// eachStore runs f on every store.
func eachStore(t *testing.T, f func(t *testing.T, e *env)) {
	for name, start := range drivers(t) {
		t.Run(name, func(t *testing.T) { f(t, start(t)) })
	}
}

func newEnv(t *testing.T, db store.Store) *env {
	t.Helper()
	t.Cleanup(func() { db.Close() })
	e := &env{sessions: sessions.New(db, sessions.Config{Agents: profiles{}}), streamsDone: make(chan struct{})}
	reg, err := tool.NewRegistry(tool.UpdateWorkingMemory(), testtools.Tally())
	if err != nil {
		t.Fatal(err)
	}
	builder := contextbuild.New(contextbuild.Config{}, e.sessions, nil)
	eng := engine.New(engine.Config{Model: "fake-model", Workspaces: t.TempDir(), DeltaEvery: time.Nanosecond,
		Approval: func(name string) bool { return name == "test_tally" }}, fakeModel{}, reg, builder)
	e.runs = runs.New(db, e.sessions, nil, runs.Config{Poll: 50 * time.Millisecond, LeaseTTL: 2 * time.Second, Agents: profiles{eng}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.runs.Work(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	us := users.New(db, nil)
	trusted := carryon.NewTrustedContext(context.Background())
	alice, aliceKey, err := us.CreateUser(trusted, carryon.NewUser{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if _, e.bobKey, err = us.CreateUser(trusted, carryon.NewUser{Name: "bob"}); err != nil {
		t.Fatal(err)
	}
	e.aliceKey, e.alice = aliceKey, carryon.NewContextWithUser(context.Background(), alice)
	srv := httptest.NewServer(httpapi.NewServer(httpapi.Config{Sessions: e.sessions, Users: us, Runs: e.runs,
		Doors: []httpapi.FrontDoor{agui.New(agui.Config{Sessions: e.sessions, Runs: e.runs, MaxBodyBytes: 64 << 10, StreamsDone: e.streamsDone})}}))
	t.Cleanup(srv.Close)
	e.url = srv.URL
	return e
}

// answer is one answer of the endpoint: the status, the JSON error or the events.
type answer struct {
	status int
	header http.Header
	body   []byte
	events []map[string]any
}

// post sends body (a value encoded as JSON, or raw bytes) to POST /v1/ag-ui with key.
func (e *env) post(t *testing.T, key string, body any) answer {
	t.Helper()
	b, ok := body.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req, _ := http.NewRequest("POST", e.url+agui.Path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		a.body, _ = readAll(resp)
		return a
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		a.events = append(a.events, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return a
}

func readAll(resp *http.Response) ([]byte, error) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(resp.Body)
	return buf.Bytes(), err
}

// types are the events' types, in order.
func (a answer) types() []string {
	var out []string
	for _, ev := range a.events {
		out = append(out, ev["type"].(string))
	}
	return out
}

// of are the events of type typ.
func (a answer) of(typ string) []map[string]any {
	var out []map[string]any
	for _, ev := range a.events {
		if ev["type"] == typ {
			out = append(out, ev)
		}
	}
	return out
}

// text is the text the TEXT_MESSAGE_CONTENT events sent.
func (a answer) text() string {
	var sb strings.Builder
	for _, ev := range a.of("TEXT_MESSAGE_CONTENT") {
		sb.WriteString(ev["delta"].(string))
	}
	return sb.String()
}

// last is the last event.
func (a answer) last(t *testing.T) map[string]any {
	t.Helper()
	if len(a.events) == 0 {
		t.Fatalf("no events; status %d, body %s", a.status, a.body)
	}
	return a.events[len(a.events)-1]
}

// snapshot is the messages of the answer's MESSAGES_SNAPSHOT.
func (a answer) snapshot(t *testing.T) []any {
	t.Helper()
	s := a.of("MESSAGES_SNAPSHOT")
	if len(s) != 1 {
		t.Fatalf("%d MESSAGES_SNAPSHOT events in %v", len(s), a.types())
	}
	return s[0]["messages"].([]any)
}

// input is a RunAgentInput.
func input(thread, run string, msgs ...any) map[string]any {
	if msgs == nil {
		msgs = []any{}
	}
	return map[string]any{"threadId": thread, "runId": run, "messages": msgs, "tools": []any{}, "context": []any{}, "state": map[string]any{}, "forwardedProps": map[string]any{}}
}

func user(id, text string) map[string]any {
	return map[string]any{"id": id, "role": "user", "content": text}
}

// errorOf decodes a refusal, checking its status and code.
func errorOf(t *testing.T, a answer, status int, code string) string {
	t.Helper()
	var body struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(a.body, &body); err != nil || a.status != status || body.Error.Code != code || body.Error.Message == "" {
		t.Fatalf("answer = %d %s (events %v), want %d with code %s", a.status, a.body, a.types(), status, code)
	}
	return body.Error.Message
}
