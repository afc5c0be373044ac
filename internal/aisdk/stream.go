package aisdk

import (
	"context"
	"net/http"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/wire"
)

// resume answers GET /v1/ai-sdk/chat/{id}/stream: the stream of the chat's active run, replayed
// from its start (the AI SDK's DefaultChatTransport takes a resumed stream as a replay of the
// message), 204 when no run is streaming (none active, or one waiting for the client's tool
// outputs or approval, whose stream ended), 404 for a chat id that names no session of the caller.
func (h *Handler) resume(w http.ResponseWriter, r *http.Request) {
	sess, err := h.find(r, r.PathValue("id"))
	var run *carryon.Run
	if err == nil {
		run, err = h.activeRun(r, sess.ID)
	}
	if err != nil {
		WriteError(w, r, err)
		return
	}
	if run == nil || run.Status.Waiting() {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	h.stream(w, r, run, 0)
}

// stream answers the run's UI message stream, its chunks from the events at seq from on (a
// start chunk first in any case), until the run ended or stopped for the client, then [DONE].
// The client leaving, or the server shutting down, ends it without [DONE]: the stream is cut,
// and the client resumes it.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, run *carryon.Run, from int64) {
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
	events, err := h.runs.Events(ctx, run.ID, 0, true)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	defer events.Close()
	w.Header().Set("X-Vercel-AI-UI-Message-Stream", "v1")
	sse := wire.StartSSE(w)
	defer sse.KeepAlive(ctx, wire.KeepAliveEvery)()
	write := func(body map[string]any) error { return sse.Event("", "", body) }
	if from > 1 {
		if write(map[string]any{"type": "start", "messageId": run.ID}) != nil {
			return
		}
	}
	t := newTranslator(run)
	for !t.ended {
		if t.paused {
			more, err := h.storedAfter(ctx, run.ID, t.pos)
			if err != nil || !more {
				break // the run waits for the client: the stream ends here
			}
		}
		e, ok, err := events.Next()
		if err != nil {
			if ctx.Err() == nil {
				_ = write(map[string]any{"type": "error", "errorText": carryon.ErrorMessage(err)})
			}
			return
		}
		if !ok {
			break
		}
		t.feed(e)
		for _, c := range t.take() {
			if c.pos >= from {
				if write(c.body) != nil {
					return
				}
			}
		}
	}
	for _, body := range t.pending {
		if write(body) != nil {
			return
		}
	}
	if ctx.Err() != nil {
		return
	}
	_ = sse.Data("[DONE]")
}

// storedAfter reports whether the run has stored events after seq: a run stopped for the client
// that went on since (a replay reads on past the stop).
func (h *Handler) storedAfter(ctx context.Context, runID string, seq int64) (bool, error) {
	events, err := h.runs.Events(ctx, runID, seq, false)
	if err != nil {
		return false, err
	}
	defer events.Close()
	_, ok, err := events.Next()
	return ok, err
}
