package httpapi

import (
	"context"
	"net/http"

	"github.com/carryon-hub/carryon"
)

// Schedule routes: /v1/sessions/{id}/schedules and /v1/schedules. The caller's only: another
// user's session or schedule is 404.

// withSchedules makes a schedule route's handler; on a server without schedules every such route
// answers 501.
func (s *server) withSchedules(handler func(carryon.ScheduleService) http.HandlerFunc) http.HandlerFunc {
	return withService(s, s.schedules, "this server keeps no schedules", handler)
}

func (s *server) handleScheduleCreate() http.HandlerFunc {
	return s.withSchedules(func(ss carryon.ScheduleService) http.HandlerFunc {
		return writeRoute[carryon.NewSchedule, *carryon.Schedule]{
			controls: retryWrite(func(in *carryon.NewSchedule) *carryon.RetryOptions { return &in.RetryOptions }),
			call:     onID(ss.Create),
			status:   http.StatusCreated,
			location: func(_ *http.Request, sc *carryon.Schedule) string { return "/v1/schedules/" + sc.ID },
		}.handler(s)
	})
}

func (s *server) scheduleList(ss carryon.ScheduleService, session func(*http.Request) string) http.HandlerFunc {
	return readRoute(s, func(r *http.Request, q *query) (*carryon.SchedulePage, error) {
		return ss.List(r.Context(), session(r), carryon.ScheduleFilter{
			Limit: int(q.int("limit", 1, carryon.MaxMessageWindow, 0)), Cursor: q.str("cursor")})
	})
}

func (s *server) handleSessionSchedules() http.HandlerFunc {
	return s.withSchedules(func(ss carryon.ScheduleService) http.HandlerFunc {
		return s.scheduleList(ss, func(r *http.Request) string { return r.PathValue("id") })
	})
}

func (s *server) handleScheduleList() http.HandlerFunc {
	return s.withSchedules(func(ss carryon.ScheduleService) http.HandlerFunc {
		return s.scheduleList(ss, func(*http.Request) string { return "" })
	})
}

func (s *server) handleScheduleGet() http.HandlerFunc {
	return s.withSchedules(func(ss carryon.ScheduleService) http.HandlerFunc {
		return readRoute(s, func(r *http.Request, _ *query) (*carryon.Schedule, error) {
			return ss.Get(r.Context(), r.PathValue("id"))
		})
	})
}

func (s *server) handleScheduleUpdate() http.HandlerFunc {
	return s.withSchedules(func(ss carryon.ScheduleService) http.HandlerFunc {
		return writeRoute[carryon.ScheduleUpdate, *carryon.Schedule]{
			controls: retryWrite(func(in *carryon.ScheduleUpdate) *carryon.RetryOptions { return &in.RetryOptions }),
			call:     onID(ss.Update),
			status:   http.StatusOK,
		}.handler(s)
	})
}

func (s *server) handleScheduleDelete() http.HandlerFunc {
	return s.withSchedules(func(ss carryon.ScheduleService) http.HandlerFunc {
		return writeRoute[carryon.RetryOptions, struct{}]{
			body:     bodyOptions{optional: true},
			controls: retryWrite(itself[carryon.RetryOptions]),
			call: func(ctx context.Context, r *http.Request, in carryon.RetryOptions) (struct{}, error) {
				return struct{}{}, ss.Delete(ctx, r.PathValue("id"), in)
			},
			status: http.StatusNoContent,
		}.handler(s)
	})
}

func (s *server) handleScheduleRun() http.HandlerFunc {
	return s.withSchedules(func(ss carryon.ScheduleService) http.HandlerFunc {
		return writeRoute[carryon.RetryOptions, *carryon.Run]{
			body:     bodyOptions{optional: true},
			controls: retryWrite(itself[carryon.RetryOptions]),
			call:     onID(ss.RunNow),
			status:   http.StatusCreated,
			location: func(_ *http.Request, run *carryon.Run) string { return "/v1/runs/" + run.ID },
		}.handler(s)
	})
}
