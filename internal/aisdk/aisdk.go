// Package aisdk is the Vercel AI SDK front door: the chat endpoint that the AI SDK's useChat
// and Chat (DefaultChatTransport) post to, answered in the UI message stream protocol v1
// (Server-Sent Events of UI message chunks, header x-vercel-ai-ui-message-stream: v1), and the
// resume endpoint that useChat({resume: true}) calls.
//
//	POST /v1/ai-sdk/chat              a chat request: id, messages, trigger
//	GET  /v1/ai-sdk/chat/{id}/stream  the active run's stream, replayed from its start; 204 without one
//
// It translates, it decides nothing: a chat is a session of the caller (its id, or a new session
// with the chat id as its external id), a user message starts a run (carryon.RunService.Start),
// an assistant message whose client tool parts carry outputs answers the run's client tool calls
// (SubmitToolOutputs), one with approval responses decides the action the run waits for
// (Approve). The stream of a run is derived from the run's stored events only (translate.go), so
// it is the same on every instance and after a restart, and its ids (the message id is the run
// id, part ids count the run's parts) are stable across resumes.
//
// httpapi mounts Handler as one of its doors (httpapi.Config.Doors) behind its bearer-key
// authentication: the caller arrives in the request's context. Errors are problem+json
// documents (errors.go), whose detail the AI SDK surfaces as the error's text.
package aisdk

import (
	"net/http"

	"github.com/carryon-hub/carryon"
)

// Prefix is the path under which Handler serves the chat endpoints.
const Prefix = "/v1/ai-sdk"

// DefaultMaxBodyBytes bounds a request body when Config.MaxBodyBytes is zero (as the native API's).
const DefaultMaxBodyBytes = 32 << 20

// Config is what Handler serves from.
type Config struct {
	// Sessions is the session service chats are sessions of. Required.
	Sessions carryon.SessionService
	// Runs is the run service that answers chats. Required.
	Runs carryon.RunService
	// MaxBodyBytes bounds a request body; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Closing StreamsDone ends every open stream (a server shutting down; clients resume).
	StreamsDone <-chan struct{}
}

// Handler serves the AI SDK chat endpoints.
type Handler struct {
	sessions    carryon.SessionService
	runs        carryon.RunService
	maxBody     int64
	streamsDone <-chan struct{}
	mux         *http.ServeMux
}

// New returns the handler of the chat endpoints over cfg's services.
func New(cfg Config) *Handler {
	h := &Handler{sessions: cfg.Sessions, runs: cfg.Runs, maxBody: cfg.MaxBodyBytes, streamsDone: cfg.StreamsDone, mux: http.NewServeMux()}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	h.mux.HandleFunc("POST "+Prefix+"/chat", h.chat)
	h.mux.HandleFunc("GET "+Prefix+"/chat/{id}/stream", h.resume)
	return h
}

// ServeHTTP answers a request of the chat endpoints; another path or method is a 404 or 405.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pattern := h.mux.Handler(r); pattern == "" {
		status := http.StatusNotFound
		code := carryon.ENOTFOUND
		if r.URL.Path == Prefix+"/chat" || isStreamPath(r.URL.Path) {
			status = http.StatusMethodNotAllowed
			code = carryon.EINVALID
		}
		writeProblem(w, r, status, code, "no route "+r.Method+" "+r.URL.Path+" in the AI SDK chat endpoints (POST "+Prefix+"/chat, GET "+Prefix+"/chat/{id}/stream)")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, h.maxBody)
	h.mux.ServeHTTP(w, r)
}

// Prefixes are the paths Handler serves, each with every path below it (httpapi.FrontDoor).
func (h *Handler) Prefixes() []string { return []string{Prefix} }

// Door names this front door (httpapi.FrontDoor): the runs its requests start record it.
func (h *Handler) Door() carryon.Door { return carryon.DoorAISDK }

// WriteError answers err as a problem+json document (httpapi.FrontDoor).
func (h *Handler) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	WriteError(w, r, err)
}
