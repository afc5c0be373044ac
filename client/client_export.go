package client

import (
	"context"
	"fmt"
	"io"
	"net/url"

	"github.com/carryon-hub/carryon"
)

// maxBundleBytes bounds an exported bundle the client reads: the server's limit (64 MiB) and a
// little.
const maxBundleBytes = 64<<20 + 1<<20

// Export returns the bundle of a session (GET /v1/sessions/{id}/export): JSON Lines with a
// checksum, docs/EXPORT.md.
func (c *Client) Export(ctx context.Context, id string) ([]byte, error) {
	resp, err := c.send(ctx, call{method: "GET", path: "/v1/sessions/" + escape(id) + "/export"}, "application/x-ndjson")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBundleBytes))
	if err != nil {
		return nil, fmt.Errorf("carryon client: reading the bundle of %s: %w", id, err)
	}
	return b, nil
}

// Storage returns what a session takes, by kind (GET /v1/sessions/{id}/storage).
func (c *Client) Storage(ctx context.Context, id string) (*carryon.SessionStorage, error) {
	var out carryon.SessionStorage
	if err := c.do(ctx, call{method: "GET", path: "/v1/sessions/" + escape(id) + "/storage"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Import makes a session of the caller from in.Bundle (POST /v1/sessions/import): a bundle, or
// OpenAI conversation items when in.Format is carryon.ImportOpenAI.
func (c *Client) Import(ctx context.Context, in carryon.ImportInput) (*carryon.ImportResult, error) {
	q := url.Values{}
	media := "application/x-ndjson"
	if in.Format != "" {
		q.Set("format", in.Format)
	}
	if in.Format == carryon.ImportOpenAI {
		media = "application/json"
	}
	if in.KeepIDs {
		q.Set("keep_ids", "true")
	}
	if in.Parent != "" {
		q.Set("parent", in.Parent)
	}
	if in.Order != "" {
		q.Set("order", in.Order)
	}
	raw := in.Bundle
	if raw == nil {
		raw = []byte{}
	}
	var out carryon.ImportResult
	if err := c.do(ctx, call{method: "POST", path: "/v1/sessions/import", query: q, raw: raw, rawType: media, requestID: in.RequestID}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
