package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/longterm"
	"github.com/carryon-hub/carryon/internal/mcpserver"
	"github.com/carryon-hub/carryon/internal/model/scripted"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/longtermtool"
	"github.com/carryon-hub/carryon/internal/users"
	"github.com/carryon-hub/carryon/internal/webhooks"
	"github.com/carryon-hub/carryon/store/postgres"
	"github.com/carryon-hub/carryon/store/sqlite"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
)

// env is the real HTTP server (httpapi with its authentication) with the MCP server at /mcp,
// over the real services (webhooks without a delivery worker: their deliveries stay queued), a
// scripted agent and an in-memory SQLite store.
type env struct {
	t        *testing.T
	srv      *httptest.Server
	aliceKey string
	bobKey   string
}

// options shape an env.
type options struct {
	// modelDelay slows the scripted model down, for runs that outlast start_run's wait.
	modelDelay time.Duration
	// runWait is start_run's bound (mcpserver.Config.RunWait).
	runWait time.Duration
	// requireVersion is the server's --require-version.
	requireVersion bool
	// writes counts the tools' writes (mcpserver.Config.Writes).
	writes mcpserver.WriteCounter
	// postgres puts the env on a fresh PostgreSQL database instead of SQLite.
	postgres bool
	// compact offers compact_session, its summaries by the scripted model.
	compact bool
}

// stores are the options of an env on each store: SQLite, and PostgreSQL when the tests have one.
func stores(t *testing.T, opt options) map[string]options {
	out := map[string]options{"sqlite": opt}
	if !pgtest.Enabled() {
		t.Log("PostgreSQL not configured: set " + pgtest.EnvURL + " to check it too")
		return out
	}
	opt.postgres = true
	out["postgres"] = opt
	return out
}

func newEnv(t *testing.T, opt options) *env {
	t.Helper()
	ctx := context.Background()
	var db store.Store
	var err error
	if opt.postgres {
		db, err = postgres.Open(ctx, pgtest.NewDatabase(t))
	} else {
		db, err = sqlite.Open(ctx, ":memory:")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ss := sessions.New(db, sessions.Config{})
	us := users.New(db, nil)
	lt := longterm.New(db, nil)
	e := &env{t: t}
	trusted := carryon.NewTrustedContext(ctx)
	for name, key := range map[string]*string{"alice": &e.aliceKey, "bob": &e.bobKey} {
		if _, *key, err = us.CreateUser(trusted, carryon.NewUser{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := tool.NewRegistry(append([]tool.Tool{tool.UpdateWorkingMemory()}, longtermtool.Tools()...)...)
	if err != nil {
		t.Fatal(err)
	}
	builder := contextbuild.New(contextbuild.Config{LongTerm: true}, ss, nil)
	eng := engine.New(engine.Config{Model: "scripted", Workspaces: t.TempDir(), LongTerm: lt}, scripted.New(opt.modelDelay), reg, builder)
	rs := runs.New(db, ss, eng, runs.Config{Poll: 50 * time.Millisecond})
	workCtx, stopWork := context.WithCancel(ctx)
	worked := make(chan struct{})
	go func() { rs.Work(workCtx); close(worked) }()
	t.Cleanup(func() { stopWork(); <-worked })
	var compact mcpserver.CompactFunc
	if opt.compact {
		cb := contextbuild.New(contextbuild.Config{}, ss, contextbuild.ModelSummarizer{Provider: scripted.New(0), Model: "scripted"})
		compact = func(ctx context.Context, id string, in carryon.CompactInput) (*carryon.Compaction, error) {
			return ss.Compact(ctx, id, in, func(ctx context.Context) (carryon.NewMessage, error) {
				plan, err := cb.Compact(ctx, id, "scripted", in.KeepLast, in.Instructions)
				if err != nil {
					return carryon.NewMessage{}, err
				}
				return plan.Summary, nil
			})
		}
	}
	// Webhooks to the tests' own receivers, on 127.0.0.1 over http.
	wh := webhooks.NewService(db, webhooks.Policy{AllowHTTP: true, AllowPrivate: true}, nil, nil)
	handler := httpapi.NewServer(httpapi.Config{
		Sessions: ss, Users: us, Runs: rs, LongTerm: lt, Webhooks: wh, Registry: prometheus.NewRegistry(), RequireVersion: opt.requireVersion,
		MCP: mcpserver.Handler(mcpserver.Config{Sessions: ss, Runs: rs, LongTerm: lt, Webhooks: wh, RunWait: opt.runWait, RequireVersion: opt.requireVersion,
			Writes: opt.writes, Compact: compact}),
	})
	e.srv = httptest.NewServer(handler)
	t.Cleanup(e.srv.Close)
	return e
}

// bearer adds an Authorization header to every request.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// connect returns a go-sdk client session with the server's /mcp, authenticated by key.
func (e *env) connect(key string) *mcp.ClientSession {
	e.t.Helper()
	return connectTo(e.t, &mcp.StreamableClientTransport{Endpoint: e.srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{key, e.srv.Client().Transport}}})
}

// connectTo returns a go-sdk client session over t, closed when the test ends.
func connectTo(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "carryon-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and returns its result, failing the test on a protocol error.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	return res
}

// ok calls a tool that must succeed and returns its structured content, after checking that
// the text content is the same JSON.
func ok(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	res := call(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v): tool error %s", name, args, text(res))
	}
	out := structured(t, res)
	var copyOf map[string]any
	if err := json.Unmarshal([]byte(text(res)), &copyOf); err != nil {
		t.Fatalf("%s: the text content is not the JSON of the result: %v", name, err)
	}
	if a, b := mustJSON(t, out), mustJSON(t, copyOf); a != b {
		t.Fatalf("%s: the text content differs from the structured content:\n%s\n%s", name, b, a)
	}
	return out
}

// toolError calls a tool that must fail with a tool error of the carryon code and returns the
// error's text.
func toolError(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, code string) string {
	t.Helper()
	res := call(t, cs, name, args)
	if !res.IsError {
		t.Fatalf("%s(%v): want the tool error %s, got %s", name, args, code, text(res))
	}
	body := structured(t, res)
	e, _ := body["error"].(map[string]any)
	if e == nil || e["code"] != code || e["message"] == "" {
		t.Fatalf("%s: want error code %s with a message, got %s", name, code, text(res))
	}
	return text(res)
}

// structured decodes the structured content of a result.
func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(mustJSON(t, res.StructuredContent)), &m); err != nil || m == nil {
		t.Fatalf("structured content is not an object: %v (%v)", res.StructuredContent, err)
	}
	return m
}

// text is the text of a result's content.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
