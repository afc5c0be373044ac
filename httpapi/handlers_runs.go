package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
)

// ActionList answers GET /v1/runs/{id}/actions: a page of the run's tool journal in order.
type ActionList struct {
	Items      []*carryon.Action `json:"items"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

func runPath(id string) string { return "/v1/runs/" + url.PathEscape(id) }

// wantsStream reports whether the client asked for Server-Sent Events.
func wantsStream(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

func (s *server) runService() (carryon.RunService, error) {
	if s.runs == nil {
		return nil, carryon.Errorf(carryon.ENOTIMPLEMENTED, "this server runs no agent")
	}
	return s.runs, nil
}

func (s *server) handleRunStart() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rs, err := s.runService()
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		in, err := decode[carryon.NewRun](s, r, bodyOptions{})
		if err == nil {
			in.WriteOptions, err = s.writeOptions(r, in.WriteOptions, true)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		ctx, rec := receipt(r)
		run, err := rs.Start(ctx, r.PathValue("id"), in)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		markReplay(w, rec)
		w.Header().Set("Location", runPath(run.ID))
		if wantsStream(r) {
			w.Header().Set("Carryon-Run-Id", run.ID)
			s.streamEvents(w, r, rs, run.ID, 0)
			return
		}
		s.writeJSON(w, r, http.StatusAccepted, run)
	}
}

func (s *server) handleRunList() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rs, err := s.runService()
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		q := &query{values: r.URL.Query()}
		page, err := rs.ListRuns(r.Context(), r.PathValue("id"), carryon.RunFilter{
			Limit: int(q.int("limit", 1, carryon.MaxMessageWindow, 0)), Cursor: q.str("cursor"),
		})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if page.Items == nil {
			page.Items = []*carryon.Run{} // an empty page is [], as on every listing
		}
		s.writeJSON(w, r, http.StatusOK, page)
	}
}

func (s *server) handleRunGet() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rs, err := s.runService()
		if err == nil {
			var run *carryon.Run
			if run, err = rs.GetRun(r.Context(), r.PathValue("id")); err == nil {
				s.writeJSON(w, r, http.StatusOK, run)
				return
			}
		}
		s.writeError(w, r, err)
	}
}

func (s *server) handleRunActions() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rs, err := s.runService()
		if err == nil {
			var acts []*carryon.Action
			if acts, err = rs.Actions(r.Context(), r.PathValue("id")); err == nil {
				var out ActionList
				if out.Items, out.NextCursor, err = pageOf(acts, actionKey, &query{values: r.URL.Query()}); err == nil {
					s.writeJSON(w, r, http.StatusOK, out)
					return
				}
			}
		}
		s.writeError(w, r, err)
	}
}

func (s *server) handleRunCancel() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rs, err := s.runService()
		var in carryon.RetryOptions
		if err == nil {
			in, err = decode[carryon.RetryOptions](s, r, bodyOptions{optional: true})
		}
		if err == nil {
			in, err = retryOptions(r, in)
		}
		if err == nil {
			ctx, rec := receipt(r)
			var run *carryon.Run
			if run, err = rs.Cancel(ctx, r.PathValue("id"), in); err == nil {
				markReplay(w, rec)
				s.writeJSON(w, r, http.StatusOK, run)
				return
			}
		}
		s.writeError(w, r, err)
	}
}

func (s *server) handleRunApprove() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rs, err := s.runService()
		var in carryon.Approval
		if err == nil {
			in, err = decode[carryon.Approval](s, r, bodyOptions{})
		}
		if err == nil {
			in.RetryOptions, err = retryOptions(r, in.RetryOptions)
		}
		if err == nil {
			ctx, rec := receipt(r)
			var run *carryon.Run
			if run, err = rs.Approve(ctx, r.PathValue("id"), in); err == nil {
				markReplay(w, rec)
				s.writeJSON(w, r, http.StatusOK, run)
				return
			}
		}
		s.writeError(w, r, err)
	}
}

func (s *server) handleRunEvents() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rs, err := s.runService()
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		q := &query{values: r.URL.Query()}
		after := q.int("after", 0, 1<<53-1, 0)
		if last := r.Header.Get("Last-Event-ID"); last != "" {
			n, err := strconv.ParseInt(strings.TrimSpace(last), 10, 64)
			if err != nil || n < 0 {
				s.writeError(w, r, carryon.Errorf(carryon.EINVALID, "Last-Event-ID must be an event id this server sent, not %q", last))
				return
			}
			after = n
		}
		s.streamEvents(w, r, rs, r.PathValue("id"), after)
	}
}

// streamEvents answers with the run's events after seq as Server-Sent Events (id = the event's
// seq, event = its type, data = the event as JSON) until the run's last event or the client
// leaves; a comment line every 15 seconds keeps idle connections open.
func (s *server) streamEvents(w http.ResponseWriter, r *http.Request, rs carryon.RunService, runID string, after int64) {
	stream, err := rs.Events(r.Context(), runID, after, true)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer stream.Close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()

	type next struct {
		e   *carryon.Event
		ok  bool
		err error
	}
	events := make(chan next)
	go func() {
		defer close(events)
		for {
			e, ok, err := stream.Next()
			select {
			case events <- next{e, ok, err}:
			case <-r.Context().Done():
				return
			}
			if !ok || err != nil {
				return
			}
		}
	}()
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.streamsDone:
			return // the server is shutting down: the client resumes with Last-Event-ID
		case <-keepalive.C:
			fmt.Fprint(w, ": keepalive\n\n")
		case n, open := <-events:
			if !open || !n.ok {
				return
			}
			if n.err != nil {
				if r.Context().Err() != nil {
					return // the client left; nothing to tell it
				}
				b, _ := json.Marshal(problemOf(n.err))
				fmt.Fprintf(w, "event: error\ndata: %s\n\n", b)
				_ = rc.Flush()
				return
			}
			b, _ := json.Marshal(n.e)
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", n.e.Seq, n.e.Type, b)
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

func (s *server) handleChat() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rs, err := s.runService()
		var in carryon.ChatInput
		if err == nil {
			in, err = decode[carryon.ChatInput](s, r, bodyOptions{})
		}
		if err == nil {
			// A chat on an existing session is a write to it (versions apply as to a run); a chat
			// without session_id makes a new session, which has no version yet.
			var opts carryon.WriteOptions
			opts, err = s.writeOptions(r, carryon.WriteOptions{RequestID: in.RequestID, ExpectedVersion: in.ExpectedVersion}, in.SessionID != "")
			in.RequestID, in.ExpectedVersion = opts.RequestID, opts.ExpectedVersion
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		ctx, rec := receipt(r)
		res, err := rs.Chat(ctx, in)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		markReplay(w, rec)
		s.writeJSON(w, r, http.StatusOK, res)
	}
}

func (s *server) handleContext() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.context == nil {
			s.writeError(w, r, carryon.Errorf(carryon.ENOTIMPLEMENTED, "this server builds no model context"))
			return
		}
		c, err := s.context(r.Context(), r.PathValue("id"))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.writeJSON(w, r, http.StatusOK, c)
	}
}
