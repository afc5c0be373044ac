// Package httpapi is the HTTP face of carryon: the server (NewServer), which maps the core contract
// of the API onto the hub services, and the client (NewClient), which implements the same service
// interfaces over HTTP for the CLI and Go programs.
//
// The server owns transport concerns only: routing (every route is in routes.go), authentication
// (an API key in `Authorization: Bearer`), request decoding and size limits, problem+json errors,
// ETag/If-Match/If-None-Match, Idempotency-Key, metrics, logging and the OpenAPI document. It must
// not make business decisions: versions, request ids, ownership and expiry are decided by the
// services, and the server only translates their answers.
//
// Every write route is served by one pipeline (writeRoute in write.go): read the body, merge the
// write controls of the headers, call the service with a write receipt, then answer with
// Idempotent-Replayed, ETag and Location as the result calls for. A new write route states its
// types, its call and its status, and gets the rest.
//
// Choices worth knowing:
//   - Write controls come from headers or the body and mean the same: If-Match "N" (also W/"N" or
//     N) is expected_version, Idempotency-Key is request_id; both given and different is 400. A
//     stale If-Match answers 412, a stale expected_version 409; both carry current_version.
//   - With Config.RequireVersion, writes to an existing session need a version (428 otherwise);
//     If-Match: * counts as an explicit "any version". Create and fork need none: a fork writes a
//     new session and leaves its source alone.
//   - PATCH /v1/sessions/{id}/memory takes {patch, expected_version?, request_id?} as
//     application/json, or the merge patch itself as application/merge-patch+json.
//   - Answers are encoded from the result value alone, so an idempotent replay is byte-identical
//     to the first answer; only headers (X-Request-Id, Date, Idempotent-Replayed) differ.
//   - Query parameters are declared per route; unknown or repeated ones are refused, so a typo
//     never passes silently.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/limits"
	"github.com/carryon-hub/carryon/internal/telemetry"
	"github.com/carryon-hub/carryon/internal/webhooks"
	"github.com/carryon-hub/carryon/internal/wire"
	"github.com/prometheus/client_golang/prometheus"
)

// MCPPath is where the server serves Config.MCP.
const MCPPath = "/mcp"

// UIPath is where the server serves Config.UI (and every path below it).
const UIPath = "/ui/"

// DefaultMaxBodyBytes is the request body limit when Config.MaxBodyBytes is zero.
const DefaultMaxBodyBytes = 4 << 20

// DefaultBodyReadTimeout bounds the time a request body may take to arrive when
// Config.BodyReadTimeout is zero.
const DefaultBodyReadTimeout = 60 * time.Second

// Config holds what the server depends on.
type Config struct {
	// Sessions and Users are the hub services; both are required.
	Sessions carryon.SessionService
	Users    carryon.UserService
	// Logger receives one line per request and every internal error; nil discards.
	Logger *slog.Logger
	// Ready reports whether the server can serve (typically a database ping); nil means always.
	Ready func(context.Context) error
	// MaxBodyBytes limits request bodies; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// BodyReadTimeout bounds the time from the start of a request to the last byte of its body
	// (a client that trickles a body gets 408 and its connection closed); 0 means
	// DefaultBodyReadTimeout, negative means no bound. It ends once the body is read, so it
	// never cuts a long answer such as an event stream.
	BodyReadTimeout time.Duration
	// MaxRequestsPerUser bounds the requests one user has in flight at once, on every front
	// door, and MaxStreamsPerUser the event streams among them (userlimits.go); 0 means the
	// defaults (DefaultMaxRequestsPerUser, DefaultMaxStreamsPerUser), negative no bound.
	MaxRequestsPerUser, MaxStreamsPerUser int
	// Limits, when set, counts every user's requests against their limits instead (package
	// limits: the rate, the streams, the requests in flight, the stored-bytes quota, the admin's
	// per-user limits, shared between instances); MaxRequestsPerUser and MaxStreamsPerUser are
	// then ignored (its defaults hold them). It also serves GET and PUT /v1/users/{id}/limits,
	// which answer 501 without it.
	Limits *limits.Limiter
	// RequireVersion refuses writes to an existing session that carry no expected version (428).
	RequireVersion bool
	// Runs is the run manager; without it the run routes answer 501.
	Runs carryon.RunService
	// LongTerm is the users' long-term memory; without it the /v1/memories routes answer 501.
	LongTerm carryon.LongTermService
	// Webhooks is the webhooks service; without it the /v1/webhooks routes answer 501.
	Webhooks webhooks.API
	// Agents lists the agent profiles (GET /v1/agents); without it that route answers 501.
	Agents carryon.AgentService
	// Budgets reads spend and sets users' budgets (GET /v1/me/usage, /v1/users/{id}/budget);
	// without it Users serves them when it is a carryon.BudgetService, else they answer 501.
	Budgets carryon.BudgetService
	// Schedules owns the schedules; without it the schedule routes answer 501.
	Schedules carryon.ScheduleService
	// Context previews the model context of a session (GET /v1/sessions/{id}/context); without
	// it that route answers 501.
	Context func(ctx context.Context, sessionID string) (*carryon.ContextPreview, error)
	// Compact stores a compaction of a session, its summary written by the session's model
	// (POST /v1/sessions/{id}/compact); without it that route answers 501.
	Compact func(ctx context.Context, sessionID string, in carryon.CompactInput) (*carryon.Compaction, error)
	// Extract learns facts from a session into its owner's long-term memory
	// (POST /v1/sessions/{id}/extract); without it that route answers 501.
	Extract func(ctx context.Context, sessionID string) (*carryon.Extraction, error)
	// Export returns the bundle of a session (GET /v1/sessions/{id}/export); without it that
	// route answers 501.
	Export func(ctx context.Context, sessionID string) ([]byte, error)
	// Storage reports what a session takes, by kind (GET /v1/sessions/{id}/storage); without it
	// that route answers 501.
	Storage func(ctx context.Context, sessionID string) (*carryon.SessionStorage, error)
	// SessionUsage reports what a session spent, per model and per day (GET
	// /v1/sessions/{id}/usage); without it, Sessions' when it is a carryon.UsageService, else
	// that route answers 501.
	SessionUsage func(ctx context.Context, sessionID string, o carryon.UsageOptions) (*carryon.SessionUsage, error)
	// Import makes a session of the caller from a bundle or OpenAI conversation items (POST
	// /v1/sessions/import); without it that route answers 501.
	Import func(ctx context.Context, in carryon.ImportInput) (*carryon.ImportResult, error)
	// Compactions lists a session's compactions (GET /v1/sessions/{id}/compactions); without it
	// that route answers 501.
	Compactions func(ctx context.Context, sessionID string) (*carryon.CompactionPage, error)
	// Closing StreamsDone ends every open event stream (a server shutting down closes it so that
	// the graceful shutdown does not wait for them; clients resume elsewhere with Last-Event-ID).
	StreamsDone <-chan struct{}
	// Registry receives the HTTP metrics and is served at /metrics; nil makes a new one with the Go
	// and process collectors.
	Registry *prometheus.Registry
	// MCP, when set, is served at /mcp (every method) behind the same bearer-key authentication
	// as the /v1 routes: it gets the request with the key's user in its context
	// (carryon.NewContextWithUser), and a request without a valid key is refused with a 401
	// problem before it is reached. The server knows nothing else of it (package mcpserver).
	MCP http.Handler
	// UI, when set, is served at UIPath and below (GET) without authentication: it is the
	// inspector's static web app (package webui), which calls the /v1 routes with the key the
	// user signs in with.
	UI http.Handler
	// Doors are the other APIs' wire formats (package openaiapi's /v1/conversations and
	// /v1/responses, …): each is served at its Prefixes and below them behind the same bearer-key
	// authentication: it gets the request with the key's user in its context, and a request it
	// does not reach (no valid key) is refused through its own WriteError, in the wire format its
	// clients expect.
	Doors []FrontDoor
	// Telemetry, when set, traces every request (an HTTP server span, continuing a W3C
	// traceparent) and counts request-id replays and write conflicts (package telemetry).
	Telemetry *telemetry.Telemetry
}

// FrontDoor is a handler of another API's wire format that httpapi mounts (Config.Doors).
type FrontDoor interface {
	http.Handler
	// Prefixes are the paths the door serves, each with every path below it.
	Prefixes() []string
	// WriteError answers an error of the request in the door's format.
	WriteError(w http.ResponseWriter, r *http.Request, err error)
	// Door names the door: its requests carry it in their context (carryon.NewContextWithDoor),
	// so that a run they start records it.
	Door() carryon.Door
}

// PublicDoor is a FrontDoor with paths that are served without authentication (an A2A agent
// card, which clients read to learn how to authenticate): a request for exactly one of
// PublicPaths reaches the door with no user in its context and counts against no user's limits.
// Every other path of the door stays behind the bearer key.
type PublicDoor interface {
	FrontDoor
	// PublicPaths are the exact paths served without a key; none may be one of Prefixes.
	PublicPaths() []string
}

// server is the handler NewServer returns.
type server struct {
	sessions       carryon.SessionService
	users          carryon.UserService
	runs           carryon.RunService
	longTerm       carryon.LongTermService
	agents         carryon.AgentService
	budgets        carryon.BudgetService
	webhooks       webhooks.API
	schedules      carryon.ScheduleService
	streamsDone    <-chan struct{}
	context        func(ctx context.Context, sessionID string) (*carryon.ContextPreview, error)
	compact        func(ctx context.Context, sessionID string, in carryon.CompactInput) (*carryon.Compaction, error)
	compactions    func(ctx context.Context, sessionID string) (*carryon.CompactionPage, error)
	export         func(ctx context.Context, sessionID string) ([]byte, error)
	storage        func(ctx context.Context, sessionID string) (*carryon.SessionStorage, error)
	sessionUsage   func(ctx context.Context, sessionID string, o carryon.UsageOptions) (*carryon.SessionUsage, error)
	importer       func(ctx context.Context, in carryon.ImportInput) (*carryon.ImportResult, error)
	extract        func(ctx context.Context, sessionID string) (*carryon.Extraction, error)
	logger         *slog.Logger
	ready          func(context.Context) error
	maxBody        int64
	bodyTimeout    time.Duration
	limits         *limits.Limiter
	limitService   carryon.LimitService
	requireVersion bool
	registry       *prometheus.Registry
	metrics        *metrics
	telemetry      *telemetry.Telemetry
	mux            *http.ServeMux
	openapi        []byte
}

// NewServer returns the HTTP handler of the API. It panics when a required service is missing.
func NewServer(cfg Config) http.Handler {
	if cfg.Sessions == nil || cfg.Users == nil {
		panic("httpapi.NewServer: Config.Sessions and Config.Users are required")
	}
	s := &server{
		sessions:       cfg.Sessions,
		users:          cfg.Users,
		runs:           cfg.Runs,
		longTerm:       cfg.LongTerm,
		agents:         cfg.Agents,
		budgets:        cfg.Budgets,
		webhooks:       cfg.Webhooks,
		schedules:      cfg.Schedules,
		streamsDone:    cfg.StreamsDone,
		context:        cfg.Context,
		compact:        cfg.Compact,
		compactions:    cfg.Compactions,
		export:         cfg.Export,
		storage:        cfg.Storage,
		sessionUsage:   cfg.SessionUsage,
		importer:       cfg.Import,
		extract:        cfg.Extract,
		logger:         cfg.Logger,
		ready:          cfg.Ready,
		maxBody:        cfg.MaxBodyBytes,
		bodyTimeout:    cfg.BodyReadTimeout,
		limits:         cfg.Limits,
		requireVersion: cfg.RequireVersion,
		registry:       cfg.Registry,
		telemetry:      cfg.Telemetry,
		mux:            http.NewServeMux(),
	}
	if s.budgets == nil {
		s.budgets, _ = cfg.Users.(carryon.BudgetService)
	}
	if u, ok := cfg.Sessions.(carryon.UsageService); ok && s.sessionUsage == nil {
		s.sessionUsage = u.SessionUsage
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.limits == nil {
		s.limits = newLimiter(cfg)
	} else {
		s.limitService = s.limits
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.bodyTimeout == 0 {
		s.bodyTimeout = DefaultBodyReadTimeout
	}
	if s.registry == nil {
		s.registry = newRegistry()
	}
	s.metrics = newMetrics(s.registry)
	routes := routeTable()
	s.openapi = buildOpenAPI(routes)
	for i := range routes {
		rt := &routes[i]
		s.mux.Handle(rt.Method+" "+rt.Pattern, s.wrap(rt.Pattern, s.checkRoute(rt, rt.handler(s))))
	}
	if cfg.MCP != nil {
		s.mux.Handle(MCPPath, s.wrap(MCPPath, s.authenticated(s.bodyFirst(s.maxBody, withDoor(carryon.DoorMCP, cfg.MCP)))))
	}
	if cfg.UI != nil {
		s.mux.Handle(UIPath, s.wrap(UIPath, cfg.UI))
		// The root is where a person lands first: the inspector.
		s.mux.Handle("GET /{$}", s.wrap("/", http.RedirectHandler(UIPath, http.StatusFound)))
	}
	for _, door := range cfg.Doors {
		for _, prefix := range door.Prefixes() {
			h := s.wrap(prefix, s.authenticatedWith(door.Door(), door.WriteError, withDoor(door.Door(), door)))
			s.mux.Handle(prefix, h)
			s.mux.Handle(prefix+"/", h)
		}
		if pub, ok := door.(PublicDoor); ok {
			for _, p := range pub.PublicPaths() {
				s.mux.Handle(p, s.wrap(p, withDoor(pub.Door(), pub)))
			}
		}
	}
	s.mux.Handle("/", s.wrap("unmatched", http.HandlerFunc(s.handleUnmatched)))
	unclean := s.wrap("unclean", http.HandlerFunc(s.handleUnclean))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// ServeMux would answer a path such as /v1/sessions/../users or //v1/sessions with a
		// redirect in HTML; the API answers a problem instead and never redirects.
		if r.Method != http.MethodConnect && r.URL.Path != cleanPath(r.URL.Path) {
			unclean.ServeHTTP(w, r)
			return
		}
		s.mux.ServeHTTP(w, r)
	})
}

// withService makes the handler of a route that needs the optional service svc (the run manager,
// long-term memory) when the server was given one; otherwise the route answers 501 with missing
// as the detail. It is decided once, when the server is made.
func withService[S comparable](s *server, svc S, missing string, handler func(S) http.HandlerFunc) http.HandlerFunc {
	var none S
	if svc == none {
		return s.notImplemented(missing)
	}
	return handler(svc)
}

// notImplemented answers every request with 501 (ENOTIMPLEMENTED) and detail msg.
func (s *server) notImplemented(msg string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, carryon.Errorf(carryon.ENOTIMPLEMENTED, "%s", msg))
	}
}

// handleUnclean refuses a path that is not in canonical form (an empty, . or .. segment).
func (s *server) handleUnclean(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, carryon.Errorf(carryon.EINVALID,
		"the path %q is not canonical (it has an empty, . or .. segment); the API does not redirect: send %q", r.URL.Path, cleanPath(r.URL.Path)))
}

// cleanPath is the canonical form of a URL path, as ServeMux computes it: rooted, without
// empty, . or .. segments, keeping a trailing slash.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// handleUnmatched answers a request no route matches: 405 with Allow when the path exists under
// other methods, 404 otherwise; both as problems.
func (s *server) handleUnmatched(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeProblem(w, wire.Problem{Type: wire.ProblemTypeBase + "method_not_allowed", Title: "Method not allowed",
			Status: http.StatusMethodNotAllowed, Code: "method_not_allowed", Instance: r.URL.Path,
			Detail: r.Method + " is not allowed on " + r.URL.Path + "; allowed: " + strings.Join(allow, ", ")})
		return
	}
	s.writeError(w, r, carryon.Errorf(carryon.ENOTFOUND, "no route for %s %s", r.Method, r.URL.Path))
}
