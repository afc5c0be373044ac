// Package mcpserver is carryon's Model Context Protocol front door: it lets any MCP client (a
// desktop app, an IDE, another agent runtime) list a user's sessions, read them, write to them and
// "continue the task", through the same hub services as the /v1 API.
//
// Like httpapi, it knows its protocol and nothing else: every answer comes from a hub service
// (carryon.SessionService, carryon.RunService, carryon.LongTermService), which decides ownership,
// versions and request ids exactly as it does for /v1. The caller is the user in the context:
// over HTTP (Handler, mounted at /mcp by httpapi after its own bearer-key authentication) the
// user the key names; over stdio (`carryon mcp`) the services are the HTTP client of a running
// server, which carries the key itself.
//
// What it serves:
//   - Tools list_sessions, get_session, create_session, append_messages, update_working_memory,
//     delete_message, remember, recall, forget and start_run; with the services that back them,
//     compact_session, the schedule tools and the webhook tools. A result is JSON (structured
//     content and the same JSON as text) carrying the ids it names; a refused call is a tool
//     error (isError) whose content is {"error": {"code", "message"}} with carryon's error code,
//     never a protocol error. Every tool that writes takes request_id and hands it to the
//     service as it is, before it reads anything: a repeat is answered from the first call (its
//     result says replayed), whatever changed since. The webhook tools are the exception, as
//     their /v1 routes are: they take none (create and rotate show a secret once).
//   - Resource templates carryon://sessions/{id}, carryon://sessions/{id}/memory,
//     carryon://sessions/{id}/messages and carryon://memories/{namespace}/{key}.
//   - The prompt continue_task {session_id}: goal, next action, plan and the last messages.
//
// Every result that carries a cache scope (the list results and resources/read) is marked
// private with a zero TTL: the answers are one user's data, and the protocol's default scope is
// public. Tool results and prompts carry no cache fields in the protocol.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/webhooks"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultRunWait bounds how long start_run waits for its run to end when Config.RunWait is zero.
// It stays under the request timeouts MCP clients commonly use (30 to 60 seconds).
const DefaultRunWait = 25 * time.Second

// DefaultNamespace is where remember stores an item when no namespace is given: the same as the
// agent's own remember tool.
const DefaultNamespace = "notes"

// Config holds what the MCP server depends on.
type Config struct {
	// Sessions is required.
	Sessions carryon.SessionService
	// Runs backs start_run; without it start_run answers not_implemented.
	Runs carryon.RunService
	// LongTerm backs remember, recall, forget and the memories resource; without it they
	// answer not_implemented.
	LongTerm carryon.LongTermService
	// Schedules backs create_schedule, list_schedules, pause_schedule, resume_schedule,
	// delete_schedule and run_schedule; without it they are not offered.
	Schedules carryon.ScheduleService
	// Webhooks backs create_webhook, list_webhooks, get_webhook, update_webhook,
	// delete_webhook, rotate_webhook_secret, list_webhook_deliveries and redeliver_webhook;
	// without it they are not offered.
	Webhooks webhooks.API
	// MaxBodyBytes limits the body of an HTTP request to Handler; 0 means the SDK's default
	// (4 MiB), as the API's own default.
	MaxBodyBytes int64
	// RunWait bounds how long start_run waits for the run to end; 0 means DefaultRunWait.
	RunWait time.Duration
	// Logger receives internal errors; nil discards.
	Logger *slog.Logger
	// RequireVersion refuses the writes to an existing session (append_messages,
	// update_working_memory, start_run) that carry no expected_version, as the /v1 API does with
	// the server's --require-version.
	RequireVersion bool
	// ShowInternalErrors puts the text of an error that is not a carryon error in the tool
	// error's message instead of "Internal error.". Over stdio those are the errors of the HTTP
	// client itself (a server that cannot be reached), which the user needs to see; a server
	// keeps them in its log.
	ShowInternalErrors bool
	// Writes counts how the tools' writes end (a replay, a conflict), as the API's routes do:
	// telemetry.Telemetry; nil counts nothing.
	Writes WriteCounter
	// Quota, when set, is asked before a tool that stores more (growing): its error (EQUOTA,
	// the caller's stored bytes at its quota) answers the call instead, as a tool error.
	Quota func(ctx context.Context) error
	// Compact, when set, backs the tool compact_session, which is offered only then.
	Compact CompactFunc
	// Extract, when set, backs the tool learn_facts, which is offered only then.
	Extract ExtractFunc
}

// WriteCounter counts how a write through a front door ended: front is "mcp" here, replayed
// says it was answered from its request id, code is the carryon error code or "".
type WriteCounter interface {
	Write(front string, replayed bool, code string)
}

// server holds the services the handlers call.
type server struct {
	sessions  carryon.SessionService
	runs      carryon.RunService
	longTerm  carryon.LongTermService
	schedules carryon.ScheduleService
	webhooks  webhooks.API
	runWait   time.Duration
	logger    *slog.Logger
	showErrs  bool
	needVer   bool
	writes    WriteCounter
	quota     func(ctx context.Context) error
	compact   CompactFunc
	extract   ExtractFunc
}

// New returns the MCP server with carryon's tools, resource templates and prompt. It panics when
// Config.Sessions is missing.
func New(cfg Config) *mcp.Server {
	if cfg.Sessions == nil {
		panic("mcpserver.New: Config.Sessions is required")
	}
	s := &server{sessions: cfg.Sessions, runs: cfg.Runs, longTerm: cfg.LongTerm, schedules: cfg.Schedules, webhooks: cfg.Webhooks, runWait: cfg.RunWait,
		logger: cfg.Logger, showErrs: cfg.ShowInternalErrors, needVer: cfg.RequireVersion, writes: cfg.Writes, compact: cfg.Compact, extract: cfg.Extract, quota: cfg.Quota}
	if s.runWait <= 0 {
		s.runWait = DefaultRunWait
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "carryon", Title: "carryon session hub", Version: carryon.Version},
		&mcp.ServerOptions{
			Instructions: instructions,
			SetCacheable: markPrivate,
		})
	s.addSessionTools(srv)
	s.addLongTermTools(srv)
	s.addRunTools(srv)
	s.addScheduleTools(srv)
	s.addWebhookTools(srv)
	if s.compact != nil {
		addCompact(s, srv)
	}
	if s.extract != nil {
		addExtract(s, srv)
	}
	s.addResources(srv)
	s.addPrompts(srv)
	return srv
}

// instructions is what the server tells a client about itself when it connects.
const instructions = `carryon keeps durable agent sessions: messages, a working memory (goal, plan, next_action, notes) and the user's long-term memory.
To continue a task, call get_session (or use the prompt continue_task) and follow its working memory's next_action; record progress with append_messages and update_working_memory.
Writes take request_id: a retry with the same request_id is answered from the first call and stores nothing twice. expected_version refuses a write when the session moved on.`

// markPrivate marks a result that carries cache fields as one user's own: only the client that
// asked may cache it, and it is stale at once.
func markPrivate(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
	c.CacheScope = "private"
	c.TTLMs = 0
}

// private is the cache field of a resources/read result.
var private = mcp.Cacheable{CacheScope: "private"}

// Handler returns the streamable HTTP handler of the MCP server, stateless (every request stands
// alone, so any instance behind a load balancer can answer it) with JSON answers. It does not
// authenticate: it expects the user in the request's context (carryon.NewContextWithUser), as
// httpapi puts it there after checking the bearer key, and refuses a request without one with
// 401.
func Handler(cfg Config) http.Handler {
	srv := New(cfg)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: cfg.Logger, MaxRequestBodyBytes: cfg.MaxBodyBytes,
			// The SDK refuses a request that reached a loopback address under another Host name
			// (a defence of servers without credentials against DNS rebinding). Every request here
			// carries an API key, which a rebinding page does not have, and a server on 127.0.0.1
			// behind a reverse proxy on the same host must answer the proxy's Host, as /v1 does.
			DisableLocalhostProtection: true})
	return auth.RequireBearerToken(userOfRequest, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(limitBatch(h))
}

// MaxBatch is how many messages one JSON-RPC batch may hold (protocol versions before
// 2025-06-18 allow batches; the body's byte bound is MaxBodyBytes).
const MaxBatch = 32

// limitBatch refuses a batch of more than MaxBatch messages with a JSON-RPC error (400), before
// any of them runs: one request must not do the work of thousands.
func limitBatch(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			next.ServeHTTP(w, r) // the SDK answers the failed read
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '[' {
			var batch []json.RawMessage
			if json.Unmarshal(t, &batch) == nil && len(batch) > MaxBatch {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{
					"code": -32600, "message": fmt.Sprintf("the batch holds %d messages; at most %d are allowed in one request", len(batch), MaxBatch)}})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// userKey is where the token info of a request holds its carryon user.
const userKey = "carryon_user"

// userOfRequest hands the SDK the user the front door authenticated, as the request's token
// info, which the SDK gives every handler (RequestExtra.TokenInfo).
func userOfRequest(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
	u := carryon.UserFromContext(r.Context())
	if u == nil {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: u.ID, Extra: map[string]any{userKey: u}}, nil
}

// caller returns ctx carrying the MCP door (carryon.DoorMCP: the runs a tool starts record it)
// and the user of the request, when the request came with one (HTTP); over stdio there is none
// and the services act for their own key.
func caller(ctx context.Context, extra *mcp.RequestExtra) context.Context {
	ctx = carryon.NewContextWithDoor(ctx, carryon.DoorMCP)
	if extra == nil || extra.TokenInfo == nil {
		return ctx
	}
	if u, ok := extra.TokenInfo.Extra[userKey].(*carryon.User); ok {
		return carryon.NewContextWithUser(ctx, u)
	}
	return ctx
}
