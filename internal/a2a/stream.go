package a2a

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/carryon-hub/carryon/internal/wire"
)

// DefaultKeepAlive is how often a quiet stream gets an SSE comment when Config.KeepAlive is zero.
const DefaultKeepAlive = wire.KeepAliveEvery

// stream answers a task as Server-Sent Events: first the task as its stored events make it,
// then an event for each change the run's events after those bring (a status update, a chunk
// of the reply), until the task ended or waits for input, or the client left. Each SSE event
// is a JSON-RPC response with the request's id; its SSE id is the run event's sequence number.
// A subscription after a restart reads the same stored events, so it resumes without a gap. A
// request with Last-Event-ID (SSE's reconnection) gets no snapshot: the events after that one.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, id json.RawMessage, d dialect, runID string) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if h.streamsDone != nil {
		go func() {
			select {
			case <-h.streamsDone:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	after, resume := lastEventID(r)
	var t *translator
	var err error
	if resume {
		t, err = h.taskUpTo(ctx, d, runID, after)
	} else {
		t, err = h.taskAt(ctx, d, runID, nil)
	}
	if err != nil {
		writeJSON(w, errorStatus(w, err), response{JSONRPC: "2.0", ID: id, Error: errorOf(err)})
		return
	}
	sse := wire.StartSSE(w)
	// A comment every h.keepAlive while the run is quiet (a long model step), so that proxies
	// keep the connection and a client that left is seen.
	defer sse.KeepAlive(ctx, h.keepAlive)()
	send := func(v any) bool {
		return sse.Event(wire.SeqID(t.lastSeq), "", response{JSONRPC: "2.0", ID: id, Result: d.wrapEvent(v)}) == nil
	}
	if !resume && !send(t.task()) || t.settled {
		return
	}
	err = h.feedAll(ctx, t, true, func(out []any) bool {
		for _, v := range out {
			if !send(v) {
				return false
			}
		}
		return !t.settled
	})
	if err != nil && ctx.Err() == nil {
		_ = sse.Event("", "", response{JSONRPC: "2.0", ID: id, Error: errorOf(err)})
	}
}

// lastEventID is the sequence number a reconnecting client saw last (Last-Event-ID).
func lastEventID(r *http.Request) (int64, bool) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil && n >= 0
}

// taskUpTo is the task as the run's stored events up to seq after made it.
func (h *Handler) taskUpTo(ctx context.Context, d dialect, runID string, after int64) (*translator, error) {
	run, err := h.runs.GetRun(ctx, runID)
	if err != nil {
		return nil, taskErr(err, runID)
	}
	t := newTranslator(d, run)
	if after == 0 {
		return t, nil
	}
	err = h.feedAll(ctx, t, false, func([]any) bool { return t.lastSeq < after })
	return t, err
}
