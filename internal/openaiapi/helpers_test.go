package openaiapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/openaiapi"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/users"
	"github.com/carryon-hub/carryon/store/postgres"
	"github.com/carryon-hub/carryon/store/sqlite"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// env is a real server (SQLite file, the hub services, a run manager whose model is the fake
// of responses_helpers_test.go, httpapi with the Conversations and Responses APIs mounted) and
// two users' keys.
type env struct {
	url              string
	sessions         *sessions.Service
	runs             *runs.Service
	model            *fakeModel
	aliceKey, bobKey string
	alice            context.Context
}

func newEnv(t *testing.T) *env {
	t.Helper()
	data := t.TempDir()
	db, err := sqlite.Open(context.Background(), filepath.Join(data, "carryon.db"))
	if err != nil {
		t.Fatal(err)
	}
	return newEnvOn(t, db, data)
}

// envDrivers makes an env on each store: SQLite, and PostgreSQL when the tests have one.
func envDrivers(t *testing.T) map[string]func(t *testing.T) *env {
	drivers := map[string]func(t *testing.T) *env{"sqlite": newEnv}
	if !pgtest.Enabled() {
		t.Log("PostgreSQL not configured: set " + pgtest.EnvURL + " to check it too")
		return drivers
	}
	drivers["postgres"] = func(t *testing.T) *env {
		db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		return newEnvOn(t, db, t.TempDir())
	}
	return drivers
}

// newEnvOn is newEnv on the store db (closed with the test) with workspaces in data.
func newEnvOn(t *testing.T, db store.Store, data string) *env {
	t.Helper()
	var err error
	t.Cleanup(func() { db.Close() })
	e := &env{sessions: sessions.New(db, sessions.Config{Agents: profiles{}}), model: &fakeModel{}}
	e.runs = startRuns(t, db, e.sessions, e.model, data)
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
	srv := httptest.NewServer(httpapi.NewServer(httpapi.Config{
		Sessions: e.sessions, Users: us,
		Runs: e.runs,
		Doors: []httpapi.FrontDoor{openaiapi.New(openaiapi.Config{Sessions: e.sessions, Runs: e.runs, Agents: profiles{},
			Compact: compactWith(e.sessions, e.model)})},
	}))
	t.Cleanup(srv.Close)
	e.url = srv.URL
	return e
}

// client is the official OpenAI Go client pointed at the server with key; it does not retry, so
// that every answer is the server's first.
func (e *env) client(key string) *openai.Client {
	c := openai.NewClient(option.WithBaseURL(e.url+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0))
	return &c
}

// wantAPIError checks that err is the SDK's *openai.Error with status and code.
func wantAPIError(t *testing.T, err error, status int, code string) *openai.Error {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("error = %v (%T), want an *openai.Error with status %d", err, err, status)
	}
	if apiErr.StatusCode != status || apiErr.Code != code || apiErr.Message == "" || apiErr.Type == "" {
		t.Fatalf("error = status %d, code %q, type %q, message %q; want status %d, code %q", apiErr.StatusCode, apiErr.Code, apiErr.Type, apiErr.Message, status, code)
	}
	return apiErr
}

// header returns the response header of an SDK error.
func header(e *openai.Error) http.Header {
	if e.Response == nil {
		return nil
	}
	return e.Response.Header
}

// compactWith is the door's compaction: the sessions service's, its summary by m.
func compactWith(ss *sessions.Service, m model.Provider) openaiapi.CompactFunc {
	b := contextbuild.New(contextbuild.Config{}, ss, contextbuild.ModelSummarizer{Provider: m, Model: "fake"})
	return func(ctx context.Context, id string, in carryon.CompactInput) (*carryon.Compaction, error) {
		return ss.Compact(ctx, id, in, func(ctx context.Context) (carryon.NewMessage, error) {
			plan, err := b.Compact(ctx, id, "fake", in.KeepLast, in.Instructions)
			if err != nil {
				return carryon.NewMessage{}, err
			}
			return plan.Summary, nil
		})
	}
}
