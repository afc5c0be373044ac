package client

import (
	"context"

	"github.com/carryon-hub/carryon"
)

// Compact stores a compaction of a session (POST /v1/sessions/{id}/compact): the session's model
// summarizes its history but the last in.KeepLast messages, and the context uses the summary in
// their place from then on. EBUSY while a run is active.
func (c *Client) Compact(ctx context.Context, id string, in carryon.CompactInput) (*carryon.Compaction, error) {
	var out carryon.Compaction
	rid := in.RequestID
	in.RequestID = ""
	if err := c.do(ctx, call{method: "POST", path: "/v1/sessions/" + escape(id) + "/compact", body: in, requestID: rid}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Compactions lists a session's compactions, oldest first (GET /v1/sessions/{id}/compactions).
func (c *Client) Compactions(ctx context.Context, id string) (*carryon.CompactionPage, error) {
	var out carryon.CompactionPage
	if err := c.do(ctx, call{method: "GET", path: "/v1/sessions/" + escape(id) + "/compactions"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Extract learns facts from the session's new turns into the caller's long-term memory (POST
// /v1/sessions/{id}/extract).
func (c *Client) Extract(ctx context.Context, id string) (*carryon.Extraction, error) {
	var out carryon.Extraction
	if err := c.do(ctx, call{method: "POST", path: "/v1/sessions/" + escape(id) + "/extract"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
