package httpapi

import (
	"net/http"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/limits"
)

// Limits per user. One user's requests must not take the server from the others: every request
// of an authenticated user, on every front door (the route table, the OpenAI-compatible routes,
// /mcp, AG-UI, the AI SDK stream, A2A), passes through the gate here after its key is checked
// and before anything runs, and is counted against the user's limits (package limits): the
// requests in flight, the event streams open, the request rate (a token bucket per user) and,
// for a request that would store more, the stored-bytes quota. Past one it is answered 429
// too_many_requests with Retry-After, or 507 insufficient_storage, in the door's own format.
// Every answer under a rate policy carries RateLimit-Policy and RateLimit.

// Defaults of Config.MaxRequestsPerUser and Config.MaxStreamsPerUser.
const (
	DefaultMaxRequestsPerUser = 256
	DefaultMaxStreamsPerUser  = 64
)

// newLimiter is the Limiter of a server given none: the in-flight and stream bounds of cfg,
// nothing else, no store.
func newLimiter(cfg Config) *limits.Limiter {
	return limits.New(limits.Config{Defaults: DefaultLimits(cfg.MaxRequestsPerUser, cfg.MaxStreamsPerUser)})
}

// DefaultLimits turns the server's flags for requests in flight and streams (0: the defaults,
// negative: no bound) into limits.
func DefaultLimits(maxRequests, maxStreams int) carryon.Limits {
	bound := func(n, def int) *int64 {
		switch {
		case n == 0:
			n = def
		case n < 0:
			n = 0
		}
		v := int64(n)
		return &v
	}
	return carryon.Limits{MaxRequests: bound(maxRequests, DefaultMaxRequestsPerUser), MaxStreams: bound(maxStreams, DefaultMaxStreamsPerUser)}
}

// freeing are the routes that write but store nothing more (or let a user get back under a
// quota): a user at its quota may still call them.
var freeing = map[string]bool{
	"POST /v1/sessions/{id}/close":          true,
	"POST /v1/sessions/{id}/restore":        true,
	"POST /v1/runs/{id}/cancel":             true,
	"POST /v1/runs/{id}/approve":            true,
	"POST /v1/runs/{id}/tool_outputs":       true,
	"POST /v1/memories/search":              true,
	"POST /v1/webhooks/{id}/rotate":         true,
	"DELETE /v1/sessions/{id}":              true,
	"DELETE /v1/memories/{namespace}/{key}": true,
}

// routeGrows says whether a request to route rt would store more: a POST, PUT or PATCH that is
// not an admin's and not one of freeing.
func routeGrows(rt *Route) bool {
	if rt.Auth == AuthAdmin || freeing[rt.Method+" "+rt.Pattern] {
		return false
	}
	return methodGrows(rt.Method)
}

// methodGrows says whether a request with method m may store more.
func methodGrows(m string) bool {
	return m == http.MethodPost || m == http.MethodPut || m == http.MethodPatch
}

// doorGrows says whether a request to a door outside the route table would store more: a POST,
// PUT or PATCH, except on the JSON-RPC doors (/mcp and A2A), whose every call is a POST, reads
// included, so that a user at its quota can still read there (the MCP server asks the quota
// before each tool that stores more, mcpserver.Config.Quota, and A2A before a message is sent,
// a2a.Config.Quota).
func doorGrows(d carryon.Door, r *http.Request) bool {
	if d == carryon.DoorMCP || d == carryon.DoorA2A {
		return false
	}
	return methodGrows(r.Method)
}

// admit counts the request of user u against its limits and sets the rate fields on the answer.
// It returns the admission (its Leave uncounts the request) or the refusal.
func (s *server) admit(w http.ResponseWriter, r *http.Request, u *carryon.User, grows bool) (*limits.Admission, error) {
	adm, err := s.limits.Enter(r.Context(), u.ID, isStream(r), grows)
	if adm.Refused != "" {
		s.metrics.refused.WithLabelValues(adm.Refused).Inc()
	}
	if adm.Policy != "" {
		w.Header().Set("RateLimit-Policy", adm.Policy)
		w.Header().Set("RateLimit", adm.State)
	}
	return adm, err
}

// isStream says whether r asks for an event stream: Server-Sent Events by its Accept header, a
// stream=true query (the Responses API's GET), a run's events (always a stream) or /mcp's GET.
func isStream(r *http.Request) bool {
	switch {
	case strings.Contains(r.Header.Get("Accept"), "text/event-stream"),
		r.URL.Query().Get("stream") == "true",
		r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/events"),
		r.Method == http.MethodGet && r.URL.Path == MCPPath:
		return true
	}
	return false
}
