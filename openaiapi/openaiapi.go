// Package openaiapi is the OpenAI-compatible front door: the Conversations API
// (/v1/conversations…) over carryon's sessions, in the wire format of the openai/openai-openapi
// specification (info.version 2.3.0), so that the OpenAI SDKs work against carryon unchanged.
//
// It translates, it decides nothing: a conversation is a session of the caller (same id, owner
// checks, expiry, versions), an item is a message (items.go), every write is a hub service call
// with the request's Idempotency-Key and If-Match, and every answer or refusal comes from the
// service. Errors are OpenAI's envelope (errors.go). Decoding is lenient on these routes only
// (decode.go says what is accepted and ignored).
//
// httpapi mounts Handler behind its bearer-key authentication (Config.OpenAI): the caller arrives
// in the request's context. This package knows HTTP and the OpenAI wire format, nothing of SQL.
package openaiapi

import (
	"net/http"

	"github.com/carryon-hub/carryon"
)

// Prefix is the path under which Handler serves: httpapi routes every request below it here.
const Prefix = "/v1/conversations"

// DefaultMaxBodyBytes bounds a request body when Config.MaxBodyBytes is zero.
const DefaultMaxBodyBytes = 32 << 20

// Config is what Handler serves from.
type Config struct {
	// Sessions is the session service the conversations are sessions of. Required.
	Sessions carryon.SessionService
	// MaxBodyBytes bounds a request body; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
}

// Handler serves the Conversations API.
type Handler struct {
	sessions carryon.SessionService
	maxBody  int64
	mux      *http.ServeMux
}

// New returns the handler of the Conversations API over cfg.Sessions.
func New(cfg Config) *Handler {
	h := &Handler{sessions: cfg.Sessions, maxBody: cfg.MaxBodyBytes, mux: http.NewServeMux()}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	h.mux.HandleFunc("POST /v1/conversations", h.createConversation)
	h.mux.HandleFunc("GET /v1/conversations/{conversation_id}", h.getConversation)
	h.mux.HandleFunc("POST /v1/conversations/{conversation_id}", h.updateConversation)
	h.mux.HandleFunc("DELETE /v1/conversations/{conversation_id}", h.deleteConversation)
	h.mux.HandleFunc("POST /v1/conversations/{conversation_id}/items", h.createItems)
	h.mux.HandleFunc("GET /v1/conversations/{conversation_id}/items", h.listItems)
	h.mux.HandleFunc("GET /v1/conversations/{conversation_id}/items/{item_id}", h.getItem)
	h.mux.HandleFunc("DELETE /v1/conversations/{conversation_id}/items/{item_id}", h.deleteItem)
	return h
}

// ServeHTTP answers a request of the Conversations API; a path or method it does not serve is a
// 404 or 405 in OpenAI's error envelope.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pattern := h.mux.Handler(r); pattern == "" {
		WriteError(w, r, carryon.Errorf(carryon.ENOTFOUND, "no route %s %s in the Conversations API", r.Method, r.URL.Path))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, h.maxBody)
	h.mux.ServeHTTP(w, r)
}

// Prefix is the path Handler serves, and every path below it (httpapi.FrontDoor).
func (h *Handler) Prefix() string { return Prefix }

// WriteError answers err in OpenAI's error envelope (httpapi.FrontDoor).
func (h *Handler) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	WriteError(w, r, err)
}
