package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/carryon-hub/carryon"
)

// ScheduleClient is the caller's schedules on a server (/v1/schedules). It implements
// carryon.ScheduleService; get one with Client.Schedules.
type ScheduleClient struct{ c *Client }

var _ carryon.ScheduleService = (*ScheduleClient)(nil)

// Schedules returns the schedules of the client's user.
func (c *Client) Schedules() *ScheduleClient { return &ScheduleClient{c: c} }

// Create adds a schedule to a session (POST /v1/sessions/{id}/schedules); the request id
// travels as Idempotency-Key.
func (s *ScheduleClient) Create(ctx context.Context, sessionID string, in carryon.NewSchedule) (*carryon.Schedule, error) {
	var out carryon.Schedule
	rid := in.RequestID
	in.RequestID = ""
	if err := s.c.do(ctx, call{method: "POST", path: "/v1/sessions/" + escape(sessionID) + "/schedules", body: in, requestID: rid}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Get returns a schedule (GET /v1/schedules/{id}).
func (s *ScheduleClient) Get(ctx context.Context, id string) (*carryon.Schedule, error) {
	var out carryon.Schedule
	if err := s.c.do(ctx, call{method: "GET", path: "/v1/schedules/" + escape(id)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List pages through a session's schedules (GET /v1/sessions/{id}/schedules), or all the
// caller's when sessionID is empty (GET /v1/schedules).
func (s *ScheduleClient) List(ctx context.Context, sessionID string, f carryon.ScheduleFilter) (*carryon.SchedulePage, error) {
	q := url.Values{}
	if f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.Cursor != "" {
		q.Set("cursor", f.Cursor)
	}
	path := "/v1/schedules"
	if sessionID != "" {
		path = "/v1/sessions/" + escape(sessionID) + "/schedules"
	}
	var out carryon.SchedulePage
	if err := s.c.do(ctx, call{method: "GET", path: path, query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Update changes, pauses or resumes a schedule (PATCH /v1/schedules/{id}).
func (s *ScheduleClient) Update(ctx context.Context, id string, in carryon.ScheduleUpdate) (*carryon.Schedule, error) {
	var out carryon.Schedule
	rid := in.RequestID
	in.RequestID = ""
	if err := s.c.do(ctx, call{method: "PATCH", path: "/v1/schedules/" + escape(id), body: in, requestID: rid}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Delete removes a schedule (DELETE /v1/schedules/{id}).
func (s *ScheduleClient) Delete(ctx context.Context, id string, opt carryon.RetryOptions) error {
	return s.c.do(ctx, call{method: "DELETE", path: "/v1/schedules/" + escape(id), requestID: opt.RequestID}, nil)
}

// RunNow starts the schedule's run now (POST /v1/schedules/{id}/run).
func (s *ScheduleClient) RunNow(ctx context.Context, id string, opt carryon.RetryOptions) (*carryon.Run, error) {
	var out carryon.Run
	if err := s.c.do(ctx, call{method: "POST", path: "/v1/schedules/" + escape(id) + "/run", requestID: opt.RequestID}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
