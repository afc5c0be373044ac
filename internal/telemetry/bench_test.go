package telemetry_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/telemetry"
	"github.com/carryon-hub/carryon/internal/users"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// BenchmarkAppendOverHTTP appends one message per request through the HTTP server (in process,
// SQLite with synchronous NORMAL so that the middleware's share is not hidden by fsync): without
// telemetry, with telemetry but tracing off (what "carryon serve" runs without an endpoint), and
// with tracing on into an exporter that discards. docs/BENCHMARKS.md quotes it.
func BenchmarkAppendOverHTTP(b *testing.B) { benchHTTP(b, true) }

// BenchmarkNotFoundOverHTTP is the middleware alone: a GET that no route matches (a 404
// problem), which touches no database.
func BenchmarkNotFoundOverHTTP(b *testing.B) { benchHTTP(b, false) }

func benchHTTP(b *testing.B, appends bool) {
	for _, c := range telemetries {
		b.Run(c.name, func(b *testing.B) {
			send, id := inProcess(b, c.tel)
			for !appends && b.Loop() {
				if rec := send("GET", "/v1/nothing", ""); rec.Code != http.StatusNotFound {
					b.Fatalf("GET /v1/nothing: %d", rec.Code)
				}
			}
			for appends && b.Loop() {
				if rec := send("POST", "/v1/sessions/"+id+"/messages", `{"messages":[{"role":"user","content":"hello"}]}`); rec.Code != http.StatusCreated {
					b.Fatalf("append: %d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

// telemetries are the three ways to run: without telemetry, with tracing off, with tracing on.
var telemetries = []struct {
	name string
	tel  func(reg *prometheus.Registry) *telemetry.Telemetry
}{
	{"none", func(*prometheus.Registry) *telemetry.Telemetry { return nil }},
	{"off", func(reg *prometheus.Registry) *telemetry.Telemetry {
		return telemetry.New(telemetry.Options{Registerer: reg})
	}},
	{"on", func(reg *prometheus.Registry) *telemetry.Telemetry {
		return telemetry.New(telemetry.Options{Registerer: reg, Exporter: discard{}})
	}},
}

// inProcess is the HTTP server over the sessions and users services on SQLite, called in process: send serves one
// request; id is a session to append to.
func inProcess(tb testing.TB, mk func(reg *prometheus.Registry) *telemetry.Telemetry) (send func(method, path, body string) *httptest.ResponseRecorder, id string) {
	data := tb.TempDir()
	reg := prometheus.NewRegistry()
	tel := mk(reg)
	// The services without their background work, so that nothing else allocates meanwhile.
	st, err := sqlite.Open(context.Background(), filepath.Join(data, "carryon.db"), sqlite.WithSynchronous("NORMAL"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	us := users.New(st, nil)
	key, err := us.EnsureLocalUser(context.Background(), data)
	if err != nil {
		tb.Fatal(err)
	}
	srv := httpapi.NewServer(httpapi.Config{Sessions: sessions.New(st, sessions.Config{}), Users: us, Registry: reg, Telemetry: tel})
	send = func(method, path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec
	}
	rec := send("POST", "/v1/sessions", `{}`)
	var sess struct{ ID string }
	if err := json.Unmarshal(rec.Body.Bytes(), &sess); rec.Code != http.StatusCreated || err != nil {
		tb.Fatalf("create session: %d %s", rec.Code, rec.Body)
	}
	return send, sess.ID
}

// discard is a span exporter that drops every span.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }

func (discard) Shutdown(context.Context) error { return nil }
