package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/wire"
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

// withRuns makes a run route's handler with the run service; on a server that runs no agent,
// every run route answers 501.
func (s *server) withRuns(handler func(carryon.RunService) http.HandlerFunc) http.HandlerFunc {
	return withService(s, s.runs, "this server runs no agent", handler)
}

func (s *server) handleRunStart() http.HandlerFunc {
	return s.withRuns(func(rs carryon.RunService) http.HandlerFunc {
		return writeRoute[carryon.NewRun, *carryon.Run]{
			controls: sessionWrite(func(in *carryon.NewRun) *carryon.WriteOptions { return &in.WriteOptions }, true),
			call:     onID(rs.Start),
			status:   http.StatusAccepted,
			location: func(_ *http.Request, run *carryon.Run) string { return runPath(run.ID) },
			stream: func(w http.ResponseWriter, r *http.Request, run *carryon.Run) {
				w.Header().Set("Carryon-Run-Id", run.ID)
				s.streamEvents(w, r, rs, run.ID, 0, true)
			},
		}.handler(s)
	})
}

func (s *server) handleRunList() http.HandlerFunc {
	return s.withRuns(func(rs carryon.RunService) http.HandlerFunc {
		return readRoute(s, func(r *http.Request, q *query) (*carryon.RunPage, error) {
			page, err := rs.ListRuns(r.Context(), r.PathValue("id"), carryon.RunFilter{
				Limit: int(q.int("limit", 1, carryon.MaxMessageWindow, 0)), Cursor: q.str("cursor"),
			})
			if err == nil {
				page.Items = orEmpty(page.Items)
			}
			return page, err
		})
	})
}

func (s *server) handleRunGet() http.HandlerFunc {
	return s.withRuns(func(rs carryon.RunService) http.HandlerFunc {
		return readRoute(s, func(r *http.Request, _ *query) (*carryon.Run, error) {
			return rs.GetRun(r.Context(), r.PathValue("id"))
		})
	})
}

func (s *server) handleRunActions() http.HandlerFunc {
	return s.withRuns(func(rs carryon.RunService) http.HandlerFunc {
		return readRoute(s, func(r *http.Request, q *query) (ActionList, error) {
			acts, err := rs.Actions(r.Context(), r.PathValue("id"))
			var out ActionList
			if err == nil {
				out.Items, out.NextCursor, err = pageOf(acts, actionKey, q)
			}
			return out, err
		})
	})
}

func (s *server) handleRunCancel() http.HandlerFunc {
	return s.withRuns(func(rs carryon.RunService) http.HandlerFunc {
		return writeRoute[carryon.RetryOptions, *carryon.Run]{
			body:     bodyOptions{optional: true},
			controls: retryWrite(itself[carryon.RetryOptions]),
			call:     onID(rs.Cancel),
			status:   http.StatusOK,
		}.handler(s)
	})
}

func (s *server) handleRunApprove() http.HandlerFunc {
	return s.withRuns(func(rs carryon.RunService) http.HandlerFunc {
		return writeRoute[carryon.Approval, *carryon.Run]{
			controls: retryWrite(func(in *carryon.Approval) *carryon.RetryOptions { return &in.RetryOptions }),
			call:     onID(rs.Approve),
			status:   http.StatusOK,
		}.handler(s)
	})
}

func (s *server) handleRunToolOutputs() http.HandlerFunc {
	return s.withRuns(func(rs carryon.RunService) http.HandlerFunc {
		return writeRoute[carryon.ToolOutputs, *carryon.Run]{
			controls: retryWrite(func(in *carryon.ToolOutputs) *carryon.RetryOptions { return &in.RetryOptions }),
			call:     onID(rs.SubmitToolOutputs),
			status:   http.StatusOK,
		}.handler(s)
	})
}

func (s *server) handleRunEvents() http.HandlerFunc {
	return s.withRuns(func(rs carryon.RunService) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
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
			s.streamEvents(w, r, rs, r.PathValue("id"), after, q.str("follow") != "false")
		}
	})
}

// streamEvents answers with the run's events after seq as Server-Sent Events (id = the event's
// seq, event = its type, data = the event as JSON) until the run's last event or the client
// leaves, or, without follow, until the events stored so far are sent; a comment line every 15
// seconds keeps idle connections open. HEAD answers the headers only.
func (s *server) streamEvents(w http.ResponseWriter, r *http.Request, rs carryon.RunService, runID string, after int64, follow bool) {
	stream, err := rs.Events(r.Context(), runID, after, follow)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer stream.Close()
	sse := wire.StartSSE(w)
	if r.Method == http.MethodHead {
		return
	}
	_ = sse.Flush()
	defer sse.KeepAlive(r.Context(), wire.KeepAliveEvery)()

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
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.streamsDone:
			return // the server is shutting down: the client resumes with Last-Event-ID
		case n, open := <-events:
			if !open || !n.ok {
				return
			}
			if n.err != nil {
				if r.Context().Err() != nil {
					return // the client left; nothing to tell it
				}
				_ = sse.Event("", "error", problemOf(n.err))
				return
			}
			// A model delta previewed before it is stored (seq 0) has no id, so a client that
			// resumes does so after the last stored event, and gets the delta's stored copy then.
			id := ""
			if n.e.Seq != 0 {
				id = wire.SeqID(n.e.Seq)
			}
			if sse.Event(id, string(n.e.Type), n.e) != nil {
				return
			}
		}
	}
}

func (s *server) handleChat() http.HandlerFunc {
	return s.withRuns(func(rs carryon.RunService) http.HandlerFunc {
		return writeRoute[carryon.ChatInput, *carryon.ChatResult]{
			controls: chatWrite,
			call: func(ctx context.Context, _ *http.Request, in carryon.ChatInput) (*carryon.ChatResult, error) {
				return rs.Chat(ctx, in)
			},
			status: http.StatusOK,
		}.handler(s)
	})
}

// chatWrite takes the controls of a chat, which keeps them in fields of its own. A chat on an
// existing session is a write to it (versions apply as to a run); a chat without session_id makes
// a new session, which has no version yet.
func chatWrite(s *server, r *http.Request, in *carryon.ChatInput) error {
	opts, err := s.writeOptions(r, carryon.WriteOptions{RequestID: in.RequestID, ExpectedVersion: in.ExpectedVersion}, in.SessionID != "")
	in.RequestID, in.ExpectedVersion = opts.RequestID, opts.ExpectedVersion
	return err
}

func (s *server) handleContext() http.HandlerFunc {
	if s.context == nil {
		return s.notImplemented("this server builds no model context")
	}
	return readRoute(s, func(r *http.Request, _ *query) (*carryon.ContextPreview, error) {
		return s.context(r.Context(), r.PathValue("id"))
	})
}
