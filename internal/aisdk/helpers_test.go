package aisdk_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/aisdk"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/users"
	"github.com/carryon-hub/carryon/internal/wire"
	"github.com/carryon-hub/carryon/store/postgres"
	"github.com/carryon-hub/carryon/store/sqlite"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// env is a real server over one store: the hub services, a run manager whose model is
// fakeModel, httpapi with the AI SDK door mounted, and two users' keys.
type env struct {
	url              string
	sessions         *sessions.Service
	runs             *runs.Service
	aliceKey, bobKey string
	alice            context.Context
	// shutdown ends the door's open streams, as a server shutting down does.
	shutdown func()
}

// fakeModel answers by the last user message: "weather" with the client tool get_weather
// offered calls it; "memo" calls update_working_memory (which the approval env asks approval
// for); tool results are answered "Done: " and them; "hang" waits until the run is stopped; any
// other message is answered "You said: <it>" word by word.
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
		last := ""
		for _, msg := range req.Messages {
			if msg.Role == model.RoleUser {
				last = msg.Content
			}
		}
		switch {
		case strings.Contains(last, "hang"):
			<-ctx.Done()
			yield(model.Chunk{}, ctx.Err())
			return
		case strings.Contains(last, "memo"):
			yield(model.Chunk{Delta: "Noting. ", ToolCalls: []model.ToolCall{{ID: "call_m1", Name: "update_working_memory", Arguments: json.RawMessage(`{"patch":{"goal":"ship"}}`)}}, FinishReason: model.FinishToolCalls}, nil)
			return
		}
		for _, t := range req.Tools {
			if t.Name == "get_weather" && strings.Contains(last, "weather") {
				yield(model.Chunk{ToolCalls: []model.ToolCall{{ID: "call_w1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}, FinishReason: model.FinishToolCalls}, nil)
				return
			}
		}
		words := strings.SplitAfter("You said: "+last, " ")
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

// profiles is the one agent profile, default, run on one engine.
type profiles struct{ eng *engine.Engine }

func (p profiles) Agent(name string) (*carryon.Agent, error) {
	if name == "" || name == carryon.DefaultAgent {
		return &carryon.Agent{Name: carryon.DefaultAgent, Model: "fake", Tools: []carryon.AgentTool{}}, nil
	}
	return nil, carryon.Errorf(carryon.EINVALID, "agent %q is not a profile of this server", name)
}

func (p profiles) Engine(_ context.Context, name string) (*engine.Engine, error) {
	if _, err := p.Agent(name); err != nil {
		return nil, err
	}
	return p.eng, nil
}

// drivers are the stores the tests run on: SQLite always, PostgreSQL when pgtest is configured.
func drivers(t *testing.T) map[string]func(t *testing.T) store.Store {
	d := map[string]func(t *testing.T) store.Store{"sqlite": func(t *testing.T) store.Store {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "carryon.db"))
		if err != nil {
			t.Fatal(err)
		}
		return db
	}}
	if !pgtest.Enabled() {
		t.Log("PostgreSQL not configured: set " + pgtest.EnvURL + " to check it too")
		return d
	}
	d["postgres"] = func(t *testing.T) store.Store {
		db, err := postgres.Open(context.Background(), pgtest.NewSchema(t))
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	return d
}

// onStores runs f on each store.
func onStores(t *testing.T, approvals bool, f func(t *testing.T, e *env)) {
	for name, open := range drivers(t) {
		t.Run(name, func(t *testing.T) { f(t, newEnv(t, open(t), approvals)) })
	}
}

// newEnv starts a server over db; with approvals, update_working_memory asks approval.
func newEnv(t *testing.T, db store.Store, approvals bool) *env {
	t.Helper()
	t.Cleanup(func() { db.Close() })
	e := &env{sessions: sessions.New(db, sessions.Config{Agents: profiles{}})}
	reg, err := tool.NewRegistry(tool.UpdateWorkingMemory())
	if err != nil {
		t.Fatal(err)
	}
	builder := contextbuild.New(contextbuild.Config{}, e.sessions, nil)
	cfg := engine.Config{Model: "fake", Workspaces: t.TempDir(), DeltaEvery: time.Nanosecond}
	if approvals {
		cfg.Approval = func(name string) bool { return name == "update_working_memory" }
	}
	eng := engine.New(cfg, fakeModel{}, reg, builder)
	e.runs = runs.New(db, e.sessions, nil, runs.Config{Poll: 20 * time.Millisecond, LeaseTTL: 2 * time.Second, Agents: profiles{eng}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.runs.Work(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	us := users.New(db, nil)
	trusted := carryon.NewTrustedContext(context.Background())
	alice, key, err := us.CreateUser(trusted, carryon.NewUser{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	e.aliceKey, e.alice = key, carryon.NewContextWithUser(context.Background(), alice)
	if _, e.bobKey, err = us.CreateUser(trusted, carryon.NewUser{Name: "bob"}); err != nil {
		t.Fatal(err)
	}
	streamsDone := make(chan struct{})
	var once sync.Once
	e.shutdown = func() { once.Do(func() { close(streamsDone) }) }
	srv := httptest.NewServer(httpapi.NewServer(httpapi.Config{
		Sessions: e.sessions, Users: us, Runs: e.runs, MaxBodyBytes: 4 << 20,
		Doors: []httpapi.FrontDoor{aisdk.New(aisdk.Config{Sessions: e.sessions, Runs: e.runs, MaxBodyBytes: 4 << 20, StreamsDone: streamsDone})},
	}))
	t.Cleanup(srv.Close)
	e.url = srv.URL
	return e
}

// answer is one HTTP answer: status, header, body, and the stream's chunks when it is one.
type answer struct {
	status int
	header http.Header
	body   string
	chunks []map[string]any
	done   bool // the stream ended with data: [DONE]
}

// do sends a request with key (body: a string as it is, anything else as JSON).
func (e *env) do(t *testing.T, key, method, path string, body any) answer {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = strings.NewReader(string(j))
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return read(t, res)
}

// read reads an answer to its end.
func read(t *testing.T, res *http.Response) answer {
	t.Helper()
	defer res.Body.Close()
	a := answer{status: res.StatusCode, header: res.Header}
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(res.Body)
		a.body = string(b)
		return a
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			if line != "" {
				t.Fatalf("a stream line that is not data: %q", line)
			}
			continue
		}
		if a.done {
			t.Fatalf("data after [DONE]: %s", data)
		}
		if data == "[DONE]" {
			a.done = true
			continue
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("a chunk that is not JSON: %s", data)
		}
		a.chunks = append(a.chunks, c)
	}
	return a
}

// chat posts a chat request of one user message with id msgID and text.
func (e *env) chat(t *testing.T, key, chatID, msgID, text string, extra map[string]any) answer {
	t.Helper()
	body := map[string]any{"id": chatID, "trigger": "submit-message", "messages": []any{userMsg(msgID, text)}}
	for k, v := range extra {
		body[k] = v
	}
	return e.do(t, key, "POST", "/v1/ai-sdk/chat", body)
}

// userMsg is a UI user message with one text part.
func userMsg(id, text string) map[string]any {
	return map[string]any{"id": id, "role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}}
}

// types are the chunks' types, space-separated.
func (a answer) types() string {
	var s []string
	for _, c := range a.chunks {
		s = append(s, c["type"].(string))
	}
	return strings.Join(s, " ")
}

// text is the text of the stream's text deltas.
func (a answer) text() string {
	var b strings.Builder
	for _, c := range a.chunks {
		if c["type"] == "text-delta" {
			b.WriteString(c["delta"].(string))
		}
	}
	return b.String()
}

// first is the stream's first chunk of type typ, nil without one.
func (a answer) first(typ string) map[string]any {
	for _, c := range a.chunks {
		if c["type"] == typ {
			return c
		}
	}
	return nil
}

// wantStream checks a stream answer: 200, the protocol's header, chunks ending with [DONE].
func wantStream(t *testing.T, a answer) {
	t.Helper()
	if a.status != 200 || a.header.Get("x-vercel-ai-ui-message-stream") != "v1" || !a.done {
		t.Fatalf("answer %d (header %q, done %v): %s %s", a.status, a.header.Get("x-vercel-ai-ui-message-stream"), a.done, a.types(), a.body)
	}
}

// wantProblem checks a problem+json refusal with status, and that detail mentions want.
func wantProblem(t *testing.T, a answer, status int, want string) {
	t.Helper()
	var p wire.Problem
	if a.status != status || !strings.HasPrefix(a.header.Get("Content-Type"), "application/problem+json") || json.Unmarshal([]byte(a.body), &p) != nil {
		t.Fatalf("answer %d %s: %s; want %d problem+json", a.status, a.header.Get("Content-Type"), a.body, status)
	}
	if p.Status != status || p.Code == "" || !strings.Contains(p.Detail, want) {
		t.Fatalf("problem %+v; want status %d and a detail with %q", p, status, want)
	}
}

// sessionCount is how many sessions alice has.
func (e *env) sessionCount(t *testing.T) int {
	t.Helper()
	page, err := e.sessions.List(e.alice, carryon.SessionFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Items)
}

// messages are the contents of the session's messages, "role: content".
func (e *env) messages(t *testing.T, sessionID string) []string {
	t.Helper()
	page, err := e.sessions.ListMessages(e.alice, sessionID, carryon.MessageFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range page.Items {
		out = append(out, fmt.Sprintf("%s: %s", m.Role, m.Content))
	}
	return out
}
