package agui

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/wire"
)

// stream answers the AG-UI run as Server-Sent Events: RUN_STARTED, STATE_SNAPSHOT (the working
// memory now), the events the translator derives from the carryon run's stored events from the
// start on, MESSAGES_SNAPSHOT (the thread with carryon's ids) and RUN_FINISHED, or RUN_ERROR.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, in *runInput, sessionID string, st start) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	closing := make(chan struct{}) // closed when the server's shutdown ended the stream
	if h.cfg.StreamsDone != nil {
		go func() {
			select {
			case <-h.cfg.StreamsDone:
				close(closing)
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	run, err := h.cfg.Runs.GetRun(ctx, st.runID)
	var mem *carryon.WorkingMemoryState
	if err == nil {
		mem, err = h.cfg.Sessions.GetWorkingMemory(ctx, sessionID)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	raw, _ := json.Marshal(mem.WorkingMemory)
	doc, _ := decodeDoc(raw)
	sse := wire.StartSSE(w)
	defer sse.KeepAlive(ctx, wire.KeepAliveEvery)()
	send := func(ev map[string]any) error { return sse.Event("", "", ev) }
	t := newTranslator(in.ThreadID, in.RunID, sessionID, run, st, doc)
	t.emit(map[string]any{"type": "RUN_STARTED", "threadId": in.ThreadID, "runId": in.RunID})
	t.emit(map[string]any{"type": "STATE_SNAPSHOT", "snapshot": doc})
	err = t.flush(send)
	if err == nil {
		err = h.follow(ctx, t, send)
	}
	if err == nil {
		err = h.end(ctx, t, send)
	}
	switch {
	case err == nil:
	case ctx.Err() == nil:
		code, msg := codeMessage(err)
		_ = send(map[string]any{"type": "RUN_ERROR", "message": msg, "code": code})
	case r.Context().Err() == nil && isClosed(closing):
		// The run goes on (another instance takes it); the client sends the same input again.
		_ = send(map[string]any{"type": "RUN_ERROR", "code": carryon.EUNAVAILABLE,
			"message": "the server is shutting down: send the same input again (the same runId) to follow the run, which goes on"})
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// follow feeds the run's events to the translator until the AG-UI run ends.
func (h *Handler) follow(ctx context.Context, t *translator, send func(map[string]any) error) error {
	events, err := h.cfg.Runs.Events(ctx, t.run.ID, 0, true)
	if err != nil {
		return err
	}
	defer events.Close()
	for !t.done {
		e, ok, err := events.Next()
		if err != nil {
			return err
		}
		if !ok {
			return carryon.Errorf(carryon.EINTERNAL, "the events of run %s ended before the run did", t.run.ID)
		}
		t.feed(e)
		if err := t.flush(send); err != nil {
			return err
		}
	}
	return nil
}

// end sends the thread's messages with carryon's ids, then the run's last event.
func (h *Handler) end(ctx context.Context, t *translator, send func(map[string]any) error) error {
	snap, err := h.snapshot(ctx, t.sessionID)
	if err != nil {
		return err
	}
	t.emit(map[string]any{"type": "MESSAGES_SNAPSHOT", "messages": snap})
	t.emit(t.last)
	return t.flush(send)
}

// snapshotMessages bounds MESSAGES_SNAPSHOT: the thread's newest messages.
const snapshotMessages = carryon.MaxMessageWindow

// snapshot is the thread's newest messages (up to snapshotMessages) as AG-UI messages.
func (h *Handler) snapshot(ctx context.Context, sessionID string) ([]map[string]any, error) {
	v, err := h.cfg.Sessions.Get(ctx, sessionID, carryon.GetOptions{Messages: -1})
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	if v.LastSeq == 0 {
		return out, nil
	}
	page, err := h.cfg.Sessions.ListMessages(ctx, sessionID, carryon.MessageFilter{BeforeSeq: v.LastSeq + 1, Limit: snapshotMessages})
	if err != nil {
		return nil, err
	}
	for _, m := range page.Items {
		if am, ok := aguiMessage(m); ok {
			out = append(out, am)
		}
	}
	return out, nil
}
