package openaiapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/wire"
)

// until says how far replay reads a run's events.
type until int

const (
	// untilStored reads the events stored now.
	untilStored until = iota
	// untilCreated stops once the segment's response was created.
	untilCreated
	// untilSettled follows the run until the segment ended or waits for a user's decision.
	untilSettled
	// untilEnded follows the run until the segment ended.
	untilEnded
)

// replay feeds the run's stored events from the first to a translator of segment, as far as u
// says, handing each stream event of the segment to each (when not nil).
func (h *Handler) replay(r *http.Request, run *carryon.Run, segment int, u until, each func(streamEvent) error) (*translator, error) {
	ctx := r.Context()
	events, err := h.runs.Events(ctx, run.ID, 0, u >= untilSettled)
	if err != nil {
		return nil, err
	}
	defer events.Close()
	t := newTranslator(run, segment)
	t.compaction = h.compactionItem
	for {
		switch {
		case t.ended, u == untilSettled && t.paused, u == untilCreated && t.cur == segment && t.resp.ID != "":
			return t, nil
		}
		e, ok, err := events.Next()
		if err != nil {
			return t, err
		}
		if !ok {
			return t, nil
		}
		t.feed(e)
		for _, se := range t.take() {
			if each != nil {
				if err := each(se); err != nil {
					return t, err
				}
			}
		}
	}
}

// lookup returns the run of a response id and the segment it names.
func (h *Handler) lookup(r *http.Request, id string) (*carryon.Run, int, error) {
	runID, segment, ok := parseResponseID(id)
	if !ok {
		return nil, 0, notFoundResponse(id)
	}
	run, err := h.runs.GetRun(r.Context(), runID)
	if err != nil {
		return nil, 0, responseErr(err, id)
	}
	return run, segment, nil
}

// segment returns the run of a response id and the translator of the segment it names, fed the
// run's events stored now; ENOTFOUND naming the response when the id names no run of the
// caller's, or a segment the run never had (run_…_7 of a run that stopped for outputs twice).
func (h *Handler) segment(r *http.Request, id string) (*carryon.Run, *translator, error) {
	run, segment, err := h.lookup(r, id)
	if err != nil {
		return nil, nil, err
	}
	t, err := h.replay(r, run, segment, untilStored, nil)
	if err != nil {
		return nil, nil, err
	}
	if t.resp.ID == "" {
		return nil, nil, notFoundResponse(id)
	}
	return run, t, nil
}

// answerAt answers the response of the run's segment as it is when u is reached.
func (h *Handler) answerAt(w http.ResponseWriter, r *http.Request, runID string, segment int, u until) {
	run, err := h.runs.GetRun(r.Context(), runID)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	t, err := h.replay(r, run, segment, u, nil)
	if err == nil && t.resp.ID == "" {
		err = notFoundResponse(responseID(runID, segment))
	}
	if err != nil {
		WriteError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, t.resp.snapshot(true))
}

// stream answers the segment's events after sequence number after as Server-Sent Events, until
// the segment ended or the client left. An error once the stream began is an error event.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, runID string, segment int, after int64) {
	run, err := h.runs.GetRun(r.Context(), runID)
	if err != nil {
		WriteError(w, r, responseErr(err, runID))
		return
	}
	// The segment must exist before the stream begins: a later segment is not waited for.
	if t, err := h.replay(r, run, segment, untilStored, nil); err != nil || t.resp.ID == "" {
		if err == nil {
			err = notFoundResponse(responseID(runID, segment))
		}
		WriteError(w, r, err)
		return
	}
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
	sse := wire.StartSSE(w)
	defer sse.KeepAlive(ctx, wire.KeepAliveEvery)()
	var last int64 = -1
	t, err := h.replay(r.WithContext(ctx), run, segment, untilEnded, func(se streamEvent) error {
		last = se.Seq
		if se.Seq <= after {
			return nil
		}
		return sse.Event("", se.Type, se.Body)
	})
	if err != nil && ctx.Err() == nil {
		code := carryon.ErrorCode(err)
		if code == "" {
			code = carryon.EINTERNAL
		}
		msg := carryon.ErrorMessage(err)
		_ = sse.Event("", "error", map[string]any{"type": "error", "code": code, "message": msg, "param": nil, "sequence_number": last + 1})
	}
	_ = t
}

// getResponse answers a response, or with ?stream=true its events after starting_after.
func (h *Handler) getResponse(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("response_id")
	run, segment, err := h.lookup(r, id)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	q := r.URL.Query()
	// The specification has stream as a query parameter; the Go SDK sends it in a JSON body.
	// Only stream is read from such a body; the rest of it is ignored, as it changes nothing.
	var body map[string]json.RawMessage
	_ = decodeBody(r, &body, true)
	if q.Get("stream") == "true" || string(body["stream"]) == "true" {
		after := int64(-1)
		if v := q.Get("starting_after"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < -1 {
				WriteError(w, r, invalidParam("starting_after", "starting_after must be a sequence number, not %q", v))
				return
			}
			after = n
		}
		h.stream(w, r, run.ID, segment, after)
		return
	}
	h.answerAt(w, r, run.ID, segment, untilStored)
}

// cancelResponse cancels the response's run (carryon's cancel: a running run stops at its next
// checkpoint) and answers the response once the run stopped, or after a few seconds as it is. A
// response id the run never had (a later segment) is a 404 that cancels nothing; a repeat with
// its Idempotency-Key goes to the cancel first, which answers it.
func (h *Handler) cancelResponse(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("response_id")
	runID, segment, ok := parseResponseID(id)
	var err error
	if !ok {
		err = notFoundResponse(id)
	}
	var used bool
	if err == nil {
		_, used, err = h.repeat(r)
	}
	if err == nil && !used {
		_, _, err = h.segment(r, id)
	}
	if err == nil {
		_, err = h.runs.Cancel(r.Context(), runID, carryon.RetryOptions{RequestID: r.Header.Get("Idempotency-Key")})
	}
	var run *carryon.Run
	if err == nil {
		run, err = h.runs.GetRun(r.Context(), runID)
	}
	if err != nil {
		WriteError(w, r, responseErr(err, id))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	_, _ = h.replay(r.WithContext(ctx), run, segment, untilSettled, nil)
	h.answerAt(w, r, run.ID, segment, untilStored)
}

// listInputItems answers the items a response took as input: the messages its request stored
// (segment 0), or the function call outputs that started it (a later segment). limit 1 to 100
// (default 20), order desc (default) or asc, after an item id.
func (h *Handler) listInputItems(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("response_id")
	run, segment, err := h.lookup(r, id)
	var items []item
	if err == nil {
		items, err = h.inputItems(r, run, segment)
	}
	if err != nil {
		WriteError(w, r, err)
		return
	}
	q := r.URL.Query()
	limit, err := listLimit(q)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	switch q.Get("order") {
	case "", "desc":
		slices.Reverse(items)
	case "asc":
	default:
		WriteError(w, r, invalidParam("order", "order must be asc or desc, not %q", q.Get("order")))
		return
	}
	if v := q.Get("after"); v != "" {
		i := slices.IndexFunc(items, func(it item) bool { return it.id() == v })
		if i < 0 {
			WriteError(w, r, invalidParam("after", "after must be an input item id of this response, not %q", v))
			return
		}
		items = items[i+1:]
	}
	more := len(items) > limit
	if more {
		items = items[:limit]
	}
	writeJSON(w, http.StatusOK, listOf(items, more))
}

// inputItems are a segment's input items, oldest first.
func (h *Handler) inputItems(r *http.Request, run *carryon.Run, segment int) ([]item, error) {
	t, err := h.replay(r, run, segment, untilStored, nil)
	if err != nil {
		return nil, err
	}
	if t.resp.ID == "" {
		return nil, notFoundResponse(responseID(run.ID, segment))
	}
	var out []item
	if segment == 0 {
		n := max(t.record.InputCount, 1)
		if run.TriggerSeq == 0 {
			return []item{}, nil // an enqueued run's message is not stored yet
		}
		page, err := h.sessions.ListMessages(r.Context(), run.SessionID, carryon.MessageFilter{AfterSeq: run.TriggerSeq - int64(n), Limit: n})
		if err != nil {
			return nil, err
		}
		for _, m := range page.Items {
			if m.Seq <= run.TriggerSeq {
				out = append(out, itemsOf(m)...)
			}
		}
		return out, nil
	}
	// A later segment's input: the outputs its run.tool_outputs event took, from the journal.
	acts, err := h.runs.Actions(r.Context(), run.ID)
	if err != nil {
		return nil, err
	}
	for i, c := range t.outputs {
		for _, a := range acts {
			if a.CallID == c && a.Executor == carryon.ExecutorClient {
				body := map[string]any{"type": typeFunctionOut, "id": fmt.Sprintf("fco_%s_%d_%d", run.ID[len("run_"):], segment, i), "call_id": c, "output": a.Result, "status": "completed"}
				out = append(out, item{body: body})
				break
			}
		}
	}
	return out, nil
}

// deleteResponse refuses: a response is a run, part of its conversation's history, which
// carryon does not rewrite. (A 400, not a 5xx, which the SDKs would retry.)
func (h *Handler) deleteResponse(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("response_id")
	if _, _, err := h.segment(r, id); err != nil {
		WriteError(w, r, err)
		return
	}
	WriteError(w, r, carryon.Errorf(carryon.EINVALID, "response %s is a run in its conversation's history, which carryon keeps: delete the conversation (DELETE /v1/conversations/{id}) or its items instead", id))
}
