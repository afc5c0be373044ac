// Package agui is the AG-UI front door (https://docs.ag-ui.com): POST /v1/ag-ui takes an AG-UI
// RunAgentInput and answers the run as a stream of AG-UI events (Server-Sent Events), so that
// an AG-UI client such as @ag-ui/client's HttpAgent, and CopilotKit through it, runs carryon's
// agent on carryon's durable sessions.
//
// It translates, it decides nothing (docs/AGUI.md states every choice):
//
//   - threadId is a session of the caller: a carryon session id ("sess_…") names that session
//     (another user's is a 404 exactly like a missing one); any other threadId is the external
//     id of one of the caller's sessions, made at its first run (run.go);
//   - runId is the request id of the run's one write, so the same input again starts nothing new
//     and answers the same run;
//   - messages whose ids carryon gave (the thread's MESSAGES_SNAPSHOT ids, a streamed message's
//     id) are known and skipped; the others are new and appended with the run;
//   - state is an RFC 7396 JSON merge patch on the session's working memory;
//   - tools are the run's client-side tools; a tool message answering a call of one is the
//     output the waiting run takes;
//   - a run waiting for an approval ends the AG-UI run with an interrupt outcome, answered by the
//     next input's resume entries.
//
// The events are derived from the run's stored events alone (stream.go). httpapi mounts Handler
// (httpapi.Config.Doors) behind its bearer-key authentication: the caller arrives in the
// request's context.
package agui

import (
	"net/http"

	"github.com/carryon-hub/carryon"
)

// Path is where Handler serves the AG-UI endpoint.
const Path = "/v1/ag-ui"

// DefaultMaxBodyBytes bounds a request body when Config.MaxBodyBytes is zero (the native API's
// default, httpapi.DefaultMaxBodyBytes).
const DefaultMaxBodyBytes = 4 << 20

// Config is what Handler serves from.
type Config struct {
	// Sessions is the session service threads are sessions of. Required.
	Sessions carryon.SessionService
	// Runs is the run service AG-UI runs are runs of; without it the endpoint answers 501.
	Runs carryon.RunService
	// Agents, when set, names the agent profiles forwardedProps.carryon.agent may select.
	Agents carryon.AgentCatalog
	// MaxBodyBytes bounds a request body; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Closing StreamsDone ends every open event stream (a server shutting down).
	StreamsDone <-chan struct{}
}

// Handler serves POST /v1/ag-ui.
type Handler struct {
	cfg Config
}

// New returns the AG-UI handler over cfg's services.
func New(cfg Config) *Handler {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	return &Handler{cfg: cfg}
}

// Prefixes are the paths Handler serves (httpapi.FrontDoor).
func (h *Handler) Prefixes() []string { return []string{Path} }

// Door names this front door (httpapi.FrontDoor): the runs its requests start record it.
func (h *Handler) Door() carryon.Door { return carryon.DoorAGUI }

// WriteError answers err as this door's JSON error (httpapi.FrontDoor).
func (h *Handler) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	writeError(w, err)
}

// ServeHTTP answers POST /v1/ag-ui; any other method or path is refused in the door's error
// shape.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path != Path:
		writeError(w, carryon.Errorf(carryon.ENOTFOUND, "no route %s %s in the AG-UI door (it serves POST %s)", r.Method, r.URL.Path, Path))
		return
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: errorObject{Code: "method_not_allowed", Message: Path + " takes POST, not " + r.Method}})
		return
	case h.cfg.Runs == nil:
		writeError(w, carryon.Errorf(carryon.ENOTIMPLEMENTED, "this server runs no agents: the AG-UI endpoint is not served"))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes)
	h.run(w, r)
}
