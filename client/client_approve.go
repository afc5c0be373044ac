package client

import (
	"context"

	"github.com/carryon-hub/carryon"
)

// Approve decides an action a waiting run stopped on (POST /v1/runs/{id}/approve); the run is
// queued to continue. The request id travels as Idempotency-Key.
func (c *Client) Approve(ctx context.Context, runID string, in carryon.Approval) (*carryon.Run, error) {
	var out carryon.Run
	rid := in.RequestID
	in.RequestID = ""
	if err := c.do(ctx, call{method: "POST", path: runPath(runID) + "/approve", body: in, requestID: rid}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SubmitToolOutputs answers the client tool calls a requires_action run waits for (POST
// /v1/runs/{id}/tool_outputs); the run is queued to continue. The request id travels as
// Idempotency-Key.
func (c *Client) SubmitToolOutputs(ctx context.Context, runID string, in carryon.ToolOutputs) (*carryon.Run, error) {
	var out carryon.Run
	rid := in.RequestID
	in.RequestID = ""
	if err := c.do(ctx, call{method: "POST", path: runPath(runID) + "/tool_outputs", body: in, requestID: rid}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
