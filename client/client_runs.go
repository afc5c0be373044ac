package client

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"

	"github.com/carryon-hub/carryon"
)

var _ carryon.RunService = (*Client)(nil)

// Start appends the user message and queues a run on the session (POST /v1/sessions/{id}/runs).
// The request id travels as Idempotency-Key; a receipt in ctx tells whether the answer was a replay.
func (c *Client) Start(ctx context.Context, sessionID string, in carryon.NewRun) (*carryon.Run, error) {
	rid := in.RequestID
	in.RequestID = ""
	var out carryon.Run
	if err := c.do(ctx, call{method: "POST", path: "/v1/sessions/" + escape(sessionID) + "/runs", body: in, requestID: rid}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetRun returns a run (GET /v1/runs/{id}).
func (c *Client) GetRun(ctx context.Context, runID string) (*carryon.Run, error) {
	var out carryon.Run
	if err := c.do(ctx, call{method: "GET", path: runPath(runID)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListRuns lists a session's runs, newest first (GET /v1/sessions/{id}/runs).
func (c *Client) ListRuns(ctx context.Context, sessionID string, f carryon.RunFilter) (*carryon.RunPage, error) {
	q := url.Values{}
	if f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.Cursor != "" {
		q.Set("cursor", f.Cursor)
	}
	var out carryon.RunPage
	if err := c.do(ctx, call{method: "GET", path: "/v1/sessions/" + escape(sessionID) + "/runs", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Cancel asks a run to stop at its next step (POST /v1/runs/{id}/cancel); the request id
// travels as Idempotency-Key.
func (c *Client) Cancel(ctx context.Context, runID string, opt carryon.RetryOptions) (*carryon.Run, error) {
	var out carryon.Run
	if err := c.do(ctx, call{method: "POST", path: runPath(runID) + "/cancel", requestID: opt.RequestID}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Actions returns the run's whole tool journal in order (GET /v1/runs/{id}/actions, every page).
func (c *Client) Actions(ctx context.Context, runID string) ([]*carryon.Action, error) {
	return listAll[*carryon.Action](ctx, c, runPath(runID)+"/actions")
}

// Chat is the seed's short path (POST /v1/chat): it sends a message to a session, created when
// in.SessionID is empty, and answers once the run has ended. The request id travels as
// Idempotency-Key, the expected version as If-Match.
func (c *Client) Chat(ctx context.Context, in carryon.ChatInput) (*carryon.ChatResult, error) {
	rid, v := in.RequestID, in.ExpectedVersion
	in.RequestID, in.ExpectedVersion = "", nil
	var out carryon.ChatResult
	if err := c.do(ctx, call{method: "POST", path: "/v1/chat", body: in, requestID: rid, ifMatch: v}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Context returns what the context builder would send the model for the session now, as the
// server's JSON (GET /v1/sessions/{id}/context): parts with token counts, the system message and
// the messages.
func (c *Client) Context(ctx context.Context, sessionID string) (json.RawMessage, error) {
	var out json.RawMessage
	if err := c.do(ctx, call{method: "GET", path: "/v1/sessions/" + escape(sessionID) + "/context"}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Events streams the run's events after seq afterSeq (GET /v1/runs/{id}/events, Server-Sent
// Events). The request is made before Events returns, so a missing run is ENOTFOUND here.
//
// The stream survives dropped connections: when the connection ends before the run's last event
// (run.finished or run.failed) it reconnects with Last-Event-ID set to the last event it
// yielded, a few times with a short backoff, and skips any event it already yielded, so the
// caller sees every event once and in order. An `event: error` from the server ends the stream
// with that problem as a *carryon.Error.
//
// With follow false, the stream ends after the events stored so far (the server is asked for
// those only, with follow=false); with follow it goes on until the run's last event.
func (c *Client) Events(ctx context.Context, runID string, afterSeq int64, follow bool) (carryon.EventStream, error) {
	st := &sseStream{c: c, ctx: ctx, runID: runID, last: afterSeq, follow: follow}
	if err := st.connect(); err != nil {
		return nil, err
	}
	return st, nil
}

// StartStream starts a run like Start and streams its events in the same request (POST
// /v1/sessions/{id}/runs with Accept: text/event-stream). It returns the run's id, from the
// Carryon-Run-Id header, and its events from the first; a dropped connection is resumed through
// GET /v1/runs/{id}/events as in Events.
func (c *Client) StartStream(ctx context.Context, sessionID string, in carryon.NewRun) (string, carryon.EventStream, error) {
	rid := in.RequestID
	in.RequestID = ""
	resp, err := c.send(ctx, call{method: "POST", path: "/v1/sessions/" + escape(sessionID) + "/runs", body: in, requestID: rid}, mediaEventStream)
	if err != nil {
		return "", nil, err
	}
	runID := resp.Header.Get("Carryon-Run-Id")
	if runID == "" {
		resp.Body.Close()
		return "", nil, carryon.Errorf(carryon.EINTERNAL, "the server answered %s without a Carryon-Run-Id header", resp.Status)
	}
	st := &sseStream{c: c, ctx: ctx, runID: runID, follow: true}
	st.attach(resp)
	return runID, st, nil
}
