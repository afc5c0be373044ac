package httpapi

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
