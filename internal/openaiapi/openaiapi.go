// Package openaiapi is the OpenAI-compatible front door: the Conversations API
// (/v1/conversations…) over carryon's sessions and the Responses API (/v1/responses…) over its
// runs, in the wire format of the openai/openai-openapi specification (info.version 2.3.0), so
// that the OpenAI SDKs work against carryon unchanged.
//
// It translates, it decides nothing: a conversation is a session of the caller (same id, owner
// checks, expiry, versions), an item is a message (items.go), a response is a run (or the part
// of a run between two stops for client tool outputs, translate.go), every write is a hub
// service call with the request's Idempotency-Key and If-Match, and every answer or refusal
// comes from the service. Errors are OpenAI's envelope (errors.go). Decoding is lenient on these routes only
// (decode.go says what is accepted and ignored).
//
// httpapi mounts Handler behind its bearer-key authentication (Config.OpenAI): the caller arrives
// in the request's context. This package knows HTTP and the OpenAI wire format, nothing of SQL.
package openaiapi

import (
	"net/http"

	"github.com/carryon-hub/carryon"
)

// Prefix is the path under which Handler serves the Conversations API: httpapi routes every
// request below it here.
const Prefix = "/v1/conversations"

// ResponsesPrefix is the path under which Handler serves the Responses API.
const ResponsesPrefix = "/v1/responses"

// DefaultMaxBodyBytes bounds a request body when Config.MaxBodyBytes is zero.
const DefaultMaxBodyBytes = 32 << 20

// Config is what Handler serves from.
type Config struct {
	// Sessions is the session service the conversations are sessions of. Required. When it is
	// also a carryon.RequestIDLookup (sessions.Service is), a write repeated with its
	// Idempotency-Key goes to the write the first request made before anything is looked up,
	// so that it answers as the first did even where the lookups would now find something else
	// (the item deleted, the response followed by the run it started).
	Sessions carryon.SessionService
	// MaxBodyBytes bounds a request body; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Runs is the run service responses are runs of; without it the Responses API answers 501.
	Runs carryon.RunService
	// Agents, when set, names the agent profiles a request's model may select.
	Agents carryon.AgentCatalog
	// Closing StreamsDone ends every open response stream (a server shutting down; clients
	// resume elsewhere with starting_after).
	StreamsDone <-chan struct{}
	// Compact stores a compaction of a session (POST /v1/responses/compact); without it that
	// route answers 501.
	Compact CompactFunc
	// CompactKey signs the compaction items the server hands out (HMAC-SHA256), so that one made
	// by another server or altered is refused; nil makes a random key, and items then do not
	// outlive the process.
	CompactKey []byte
}

// Handler serves the Conversations and Responses APIs.
type Handler struct {
	sessions    carryon.SessionService
	requests    carryon.RequestIDLookup // nil: every request is looked up as new
	runs        carryon.RunService
	agents      carryon.AgentCatalog
	streamsDone <-chan struct{}
	maxBody     int64
	compact     CompactFunc
	compactKey  []byte
	mux         *http.ServeMux
}

// New returns the handler of the Conversations API over cfg.Sessions and of the Responses API
// over cfg.Runs.
func New(cfg Config) *Handler {
	h := &Handler{sessions: cfg.Sessions, runs: cfg.Runs, agents: cfg.Agents, streamsDone: cfg.StreamsDone, maxBody: cfg.MaxBodyBytes, mux: http.NewServeMux()}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	h.compact, h.compactKey = cfg.Compact, cfg.CompactKey
	if len(h.compactKey) == 0 {
		h.compactKey = newCompactKey()
	}
	h.requests, _ = cfg.Sessions.(carryon.RequestIDLookup)
	h.mux.HandleFunc("POST /v1/conversations", h.createConversation)
	h.mux.HandleFunc("GET /v1/conversations/{conversation_id}", h.getConversation)
	h.mux.HandleFunc("POST /v1/conversations/{conversation_id}", h.updateConversation)
	h.mux.HandleFunc("DELETE /v1/conversations/{conversation_id}", h.deleteConversation)
	h.mux.HandleFunc("POST /v1/conversations/{conversation_id}/items", h.createItems)
	h.mux.HandleFunc("GET /v1/conversations/{conversation_id}/items", h.listItems)
	h.mux.HandleFunc("GET /v1/conversations/{conversation_id}/items/{item_id}", h.getItem)
	h.mux.HandleFunc("DELETE /v1/conversations/{conversation_id}/items/{item_id}", h.deleteItem)
	responses := map[string]http.HandlerFunc{
		"POST /v1/responses":                          h.createResponse,
		"POST /v1/responses/compact":                  h.compactResponse,
		"GET /v1/responses/{response_id}":             h.getResponse,
		"POST /v1/responses/{response_id}/cancel":     h.cancelResponse,
		"GET /v1/responses/{response_id}/input_items": h.listInputItems,
		"DELETE /v1/responses/{response_id}":          h.deleteResponse,
	}
	for pattern, fn := range responses {
		if h.runs == nil {
			fn = func(w http.ResponseWriter, r *http.Request) {
				WriteError(w, r, carryon.Errorf(carryon.ENOTIMPLEMENTED, "this server runs no agents: the Responses API is not served"))
			}
		}
		h.mux.HandleFunc(pattern, fn)
	}
	return h
}

// ServeHTTP answers a request of the Conversations API; a path or method it does not serve is a
// 404 or 405 in OpenAI's error envelope.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pattern := h.mux.Handler(r); pattern == "" {
		WriteError(w, r, carryon.Errorf(carryon.ENOTFOUND, "no route %s %s in the Conversations and Responses APIs", r.Method, r.URL.Path))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, h.maxBody)
	h.mux.ServeHTTP(w, r)
}

// repeat reports whether the request's Idempotency-Key was used already, and the session its
// write belongs to (carryon.RequestIDLookup). Every write asks it before the lookups of its
// translation: a repeat skips those (their answers may have changed with the first request) and
// makes the same service call the first request made, which answers it as it did then.
func (h *Handler) repeat(r *http.Request) (session string, used bool, err error) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" || h.requests == nil {
		return "", false, nil
	}
	return h.requests.RequestIDUsed(r.Context(), key)
}

// Prefixes are the paths Handler serves, each with every path below it (httpapi.FrontDoor).
func (h *Handler) Prefixes() []string { return []string{Prefix, ResponsesPrefix} }

// Door names this front door (httpapi.FrontDoor): the runs its requests start record it.
func (h *Handler) Door() carryon.Door { return carryon.DoorOpenAI }

// WriteError answers err in OpenAI's error envelope (httpapi.FrontDoor).
func (h *Handler) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	WriteError(w, r, err)
}
