package a2a

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/carryon-hub/carryon"
)

// method is an A2A method the endpoint serves, under its 1.0 or its 0.3 name.
type method struct {
	op     string
	legacy bool
}

var methods = map[string]method{
	"SendMessage":          {"send", false},
	"SendStreamingMessage": {"stream", false},
	"GetTask":              {"get", false},
	"CancelTask":           {"cancel", false},
	"SubscribeToTask":      {"subscribe", false},
	"message/send":         {"send", true},
	"message/stream":       {"stream", true},
	"tasks/get":            {"get", true},
	"tasks/cancel":         {"cancel", true},
	"tasks/resubscribe":    {"subscribe", true},
}

// unsupported are the methods of the specification this endpoint does not serve, with why.
var unsupported = map[string]string{
	"ListTasks":                           "listing tasks is not served: a context's tasks are its session's runs (GET /v1/sessions/{id}/runs)",
	"CreateTaskPushNotificationConfig":    "push notifications are not supported: stream the task (SendStreamingMessage, SubscribeToTask)",
	"GetTaskPushNotificationConfig":       "push notifications are not supported",
	"ListTaskPushNotificationConfigs":     "push notifications are not supported",
	"DeleteTaskPushNotificationConfig":    "push notifications are not supported",
	"GetExtendedAgentCard":                "there is no extended agent card: the public card is the whole card",
	"tasks/pushNotificationConfig/set":    "push notifications are not supported",
	"tasks/pushNotificationConfig/get":    "push notifications are not supported",
	"tasks/pushNotificationConfig/list":   "push notifications are not supported",
	"tasks/pushNotificationConfig/delete": "push notifications are not supported",
	"agent/getAuthenticatedExtendedCard":  "there is no extended agent card: the public card is the whole card",
}

// taskParams are the params of GetTask, CancelTask and SubscribeToTask (and their 0.3 names).
type taskParams struct {
	Tenant        string          `json:"tenant"`
	ID            string          `json:"id"`
	HistoryLength *int            `json:"historyLength"`
	Metadata      json.RawMessage `json:"metadata"`
}

// serveRPC answers one JSON-RPC request of the endpoint of agent ("" for the default profile).
func (h *Handler) serveRPC(w http.ResponseWriter, r *http.Request, agent string) {
	req, id, refusal, status := h.readRequest(w, r)
	if refusal != nil {
		writeJSON(w, status, response{JSONRPC: "2.0", ID: id, Error: refusal})
		return
	}
	answer := func(result any, err error) {
		if err != nil {
			writeJSON(w, errorStatus(w, err), response{JSONRPC: "2.0", ID: id, Error: errorOf(err)})
			return
		}
		writeJSON(w, http.StatusOK, response{JSONRPC: "2.0", ID: id, Result: result})
	}
	m, ok := methods[req.Method]
	if !ok {
		if why, known := unsupported[req.Method]; known {
			answer(nil, rpcErr(codeUnsupported, "%s: %s", req.Method, why))
			return
		}
		answer(nil, rpcErr(codeMethodNotFound, "method %q is not an A2A method this endpoint serves (SendMessage, SendStreamingMessage, GetTask, CancelTask, SubscribeToTask, or their 0.3 names)", req.Method))
		return
	}
	d := dialect{legacy: m.legacy}
	ctx := r.Context()
	switch m.op {
	case "send":
		var p sendParams
		if err := decodeParams(req.Params, &p); err != nil {
			answer(nil, err)
			return
		}
		if err := h.checkQuota(ctx); err != nil {
			answer(nil, err)
			return
		}
		runID, err := h.deliver(ctx, agent, p)
		if err != nil {
			answer(nil, err)
			return
		}
		until := settled
		if p.Configuration != nil && (p.Configuration.ReturnImmediately != nil && *p.Configuration.ReturnImmediately ||
			p.Configuration.Blocking != nil && !*p.Configuration.Blocking) {
			until = nil
		}
		t, err := h.taskAt(ctx, d, runID, until)
		if err != nil {
			answer(nil, err)
			return
		}
		answer(d.wrapSend(t.task()), nil)
	case "stream":
		var p sendParams
		if err := decodeParams(req.Params, &p); err != nil {
			answer(nil, err)
			return
		}
		if err := h.checkQuota(ctx); err != nil {
			answer(nil, err)
			return
		}
		runID, err := h.deliver(ctx, agent, p)
		if err != nil {
			answer(nil, err)
			return
		}
		h.stream(w, r, id, d, runID)
	case "get", "cancel", "subscribe":
		var p taskParams
		if err := decodeParams(req.Params, &p); err != nil {
			answer(nil, err)
			return
		}
		if p.ID == "" {
			answer(nil, rpcErr(codeInvalidParams, "params.id (the task's id) is required"))
			return
		}
		switch m.op {
		case "get":
			t, err := h.taskAt(ctx, d, p.ID, nil)
			if err != nil {
				answer(nil, err)
				return
			}
			answer(t.task(), nil)
		case "cancel":
			t, err := h.cancel(ctx, d, p.ID)
			if err != nil {
				answer(nil, err)
				return
			}
			answer(t.task(), nil)
		default:
			if _, err := h.runs.GetRun(ctx, p.ID); err != nil {
				answer(nil, taskErr(err, p.ID))
				return
			}
			h.stream(w, r, id, d, p.ID)
		}
	}
}

// settled is how far a blocking send waits: until the task ended or waits for input.
func settled(t *translator) bool { return t.settled }

// ended is how far a cancel waits: until the task ended.
func ended(t *translator) bool {
	return t.state == stateCompleted || t.state == stateFailed || t.state == stateCanceled
}

// taskErr names the task in a run's not-found error, as A2A's task-not-found.
func taskErr(err error, id string) error {
	if carryon.ErrorCode(err) == carryon.ENOTFOUND {
		return rpcErr(codeTaskNotFound, "task %s not found", id)
	}
	return err
}

// taskAt returns the task of a run from its stored events, and when until is given, from the
// events that follow, until it holds (or ctx ends).
func (h *Handler) taskAt(ctx context.Context, d dialect, runID string, until func(*translator) bool) (*translator, error) {
	run, err := h.runs.GetRun(ctx, runID)
	if err != nil {
		return nil, taskErr(err, runID)
	}
	t := newTranslator(d, run)
	if err := h.feedAll(ctx, t, false, nil); err != nil {
		return nil, err
	}
	if until == nil || until(t) {
		return t, nil
	}
	err = h.feedAll(ctx, t, true, func([]any) bool { return !until(t) })
	if ctx.Err() != nil {
		return t, nil // the caller left or the wait ran out: the task as it is
	}
	return t, err
}

// feedAll feeds t the run's events after the last it read: those stored now, or with follow
// those that come, for as long as each (given the stream events of an event) says to go on.
func (h *Handler) feedAll(ctx context.Context, t *translator, follow bool, each func([]any) bool) error {
	events, err := h.runs.Events(ctx, t.run.ID, t.lastSeq, follow)
	if err != nil {
		return taskErr(err, t.run.ID)
	}
	defer events.Close()
	for {
		e, ok, err := events.Next()
		if err != nil || !ok {
			return err
		}
		out := t.feed(e)
		if each != nil && !each(out) {
			return nil
		}
	}
}

// cancel asks the run to stop and answers its task once it ended (or after a few seconds, as it
// is then); a task that already ended is A2A's task-not-cancelable.
func (h *Handler) cancel(ctx context.Context, d dialect, id string) (*translator, error) {
	run, err := h.runs.GetRun(ctx, id)
	if err != nil {
		return nil, taskErr(err, id)
	}
	if run.Status.Terminal() {
		t, err := h.taskAt(ctx, d, id, nil)
		if err != nil {
			return nil, err
		}
		return nil, rpcErr(codeNotCancelable, "task %s has ended (%s) and cannot be canceled", id, legacyStates[t.state])
	}
	if _, err := h.runs.Cancel(ctx, id, carryon.RetryOptions{}); err != nil {
		return nil, taskErr(err, id)
	}
	wait, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	return h.taskAt(wait, d, id, ended)
}

// checkQuota asks Config.Quota, when set, whether the caller may store more.
func (h *Handler) checkQuota(ctx context.Context) error {
	if h.quota == nil {
		return nil
	}
	return h.quota(ctx)
}
