// Package a2a is the A2A (Agent2Agent protocol) front door: an agent card per agent profile and
// the JSON-RPC binding of A2A 1.0 (SendMessage, SendStreamingMessage, GetTask, CancelTask,
// SubscribeToTask; the 0.3 names message/send, message/stream, tasks/get, tasks/cancel and
// tasks/resubscribe are taken too and answered in the 0.3 shapes), over carryon's sessions and
// runs, so that A2A clients such as @a2a-js/sdk talk to carryon's agents unchanged.
//
// It translates, it decides nothing: a contextId is a session of the caller, a task is a run, a
// message's messageId is the request id of the write it makes (a retried send is applied once),
// input-required is a run that waits for a user's approval or for the client's tool outputs,
// and the next message on that task answers it. A task's state, reply and stream are read from
// the run's stored events (task.go), so that a subscription after a restart resumes where the
// stored events are, without a gap. Errors are JSON-RPC's, with A2A's codes (jsonrpc.go).
//
// httpapi mounts the Handler as a front door (httpapi.Config.Doors) behind its bearer-key
// authentication; the agent cards are its public paths (httpapi.PublicDoor), which clients read
// before they have a key.
//
// Paths: POST /a2a is the JSON-RPC endpoint of the default profile, POST /a2a/{agent} that of
// a named one; GET /.well-known/agent-card.json (and /a2a/.well-known/agent-card.json) is the
// default profile's card, GET /a2a/{agent}/.well-known/agent-card.json a named profile's.
package a2a

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
)

// Prefix is the path under which the JSON-RPC endpoints are served.
const Prefix = "/a2a"

// WellKnownCard is the path of the default profile's agent card (A2A's well-known URI); a named
// profile's is Prefix/{agent}/WellKnownCard.
const WellKnownCard = "/.well-known/agent-card.json"

// DefaultMaxBodyBytes bounds a request body when Config.MaxBodyBytes is zero.
const DefaultMaxBodyBytes = 4 << 20

// Catalog is the agent profiles the door serves a card and an endpoint for (agents.Set is one).
type Catalog interface {
	carryon.AgentCatalog
	// Names lists the profiles.
	Names() []string
}

// Config is what the Handler serves from.
type Config struct {
	// Sessions holds the contexts; Runs runs the tasks. Both are required. When Sessions is also
	// a carryon.RequestIDLookup, a message repeated with its messageId answers the task it made
	// before anything is checked again.
	Sessions carryon.SessionService
	Runs     carryon.RunService
	// Agents are the profiles; required.
	Agents Catalog
	// MaxBodyBytes bounds a request body; zero means DefaultMaxBodyBytes (serve passes the
	// native API's limit, --max-body).
	MaxBodyBytes int64
	// Closing StreamsDone ends every open stream (a server shutting down; clients resubscribe).
	StreamsDone <-chan struct{}
	// KeepAlive is how often a quiet stream gets an SSE comment; zero means DefaultKeepAlive.
	KeepAlive time.Duration
	// Quota, when set, is asked before a message is sent (SendMessage, SendStreamingMessage):
	// its error (EQUOTA, the caller's stored bytes at its quota) answers instead. Reads and
	// cancels are never refused by it.
	Quota func(ctx context.Context) error
}

// Handler serves the agent cards and the JSON-RPC endpoints.
type Handler struct {
	sessions    carryon.SessionService
	requests    carryon.RequestIDLookup
	runs        carryon.RunService
	agents      Catalog
	maxBody     int64
	streamsDone <-chan struct{}
	keepAlive   time.Duration
	quota       func(ctx context.Context) error
}

// New returns the handler over cfg. It panics when a required service is missing.
func New(cfg Config) *Handler {
	if cfg.Sessions == nil || cfg.Runs == nil || cfg.Agents == nil {
		panic("a2a.New: Config.Sessions, Runs and Agents are required")
	}
	h := &Handler{sessions: cfg.Sessions, runs: cfg.Runs, agents: cfg.Agents, maxBody: cfg.MaxBodyBytes, streamsDone: cfg.StreamsDone, keepAlive: cfg.KeepAlive,
		quota: cfg.Quota}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	if h.keepAlive <= 0 {
		h.keepAlive = DefaultKeepAlive
	}
	h.requests, _ = cfg.Sessions.(carryon.RequestIDLookup)
	return h
}

// Prefixes are the paths the door serves behind a key (httpapi.FrontDoor).
func (h *Handler) Prefixes() []string { return []string{Prefix} }

// Door names this front door (httpapi.FrontDoor): the runs its requests start record it.
func (h *Handler) Door() carryon.Door { return carryon.DoorA2A }

// PublicPaths are the agent cards, served without a key (httpapi.PublicDoor).
func (h *Handler) PublicPaths() []string {
	paths := []string{WellKnownCard, Prefix + WellKnownCard}
	for _, name := range h.agents.Names() {
		paths = append(paths, Prefix+"/"+name+WellKnownCard)
	}
	return paths
}

// WriteError answers err as a JSON-RPC error with no id, with the HTTP status the native API
// gives its code (httpapi.FrontDoor: a request refused before the door, such as one without a
// valid key).
func (h *Handler) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	writeRefusal(w, err)
}

// ServeHTTP routes a request: a card (GET) or a JSON-RPC call (POST) of a profile.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	agent, card, ok := h.route(r.URL.Path)
	if !ok {
		writeRefusal(w, carryon.Errorf(carryon.ENOTFOUND, "no A2A agent at %s; the agents are %s", r.URL.Path, strings.Join(h.agentPaths(), ", ")))
		return
	}
	switch {
	case card && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		h.serveCard(w, r, agent)
	case card:
		w.Header().Set("Allow", "GET, HEAD")
		writeRefusal(w, carryon.Errorf(carryon.EINVALID, "an agent card is read with GET, not %s", r.Method), http.StatusMethodNotAllowed)
	case r.Method == http.MethodPost:
		h.serveRPC(w, r, agent)
	default:
		w.Header().Set("Allow", "POST")
		writeRefusal(w, carryon.Errorf(carryon.EINVALID, "the A2A JSON-RPC endpoint takes POST, not %s", r.Method), http.StatusMethodNotAllowed)
	}
}

// route names the profile of a path ("" for the default one) and whether the path is its card.
func (h *Handler) route(p string) (agent string, card, ok bool) {
	switch p {
	case WellKnownCard, Prefix + WellKnownCard:
		return "", true, true
	case Prefix, Prefix + "/":
		return "", false, true
	}
	rest, found := strings.CutPrefix(p, Prefix+"/")
	if !found {
		return "", false, false
	}
	name, tail, _ := strings.Cut(rest, "/")
	if _, err := h.agents.Agent(name); err != nil || name == "" {
		return "", false, false
	}
	switch "/" + tail {
	case "/":
		return name, false, true
	case WellKnownCard:
		return name, true, true
	}
	return "", false, false
}

// agentPaths lists the JSON-RPC endpoints, for an error that names them.
func (h *Handler) agentPaths() []string {
	out := []string{Prefix}
	for _, n := range h.agents.Names() {
		out = append(out, Prefix+"/"+n)
	}
	return out
}
