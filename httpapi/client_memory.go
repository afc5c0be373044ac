package httpapi

import (
	"context"
	"net/url"
	"strconv"

	"github.com/carryon-hub/carryon"
)

// MemoryClient is the caller's long-term memory on a server (/v1/memories). It implements
// carryon.MemoryService; get one with Client.Memories.
type MemoryClient struct{ c *Client }

var _ carryon.MemoryService = (*MemoryClient)(nil)

// Memories returns the long-term memory of the client's user. (A separate type, because the
// names Get, List and Delete of the Client already belong to sessions.)
func (c *Client) Memories() *MemoryClient { return &MemoryClient{c: c} }

func memoryPath(namespace, key string) string {
	return "/v1/memories/" + escape(namespace) + "/" + escape(key)
}

// Put stores value (and text) under (namespace, key) (PUT /v1/memories/{namespace}/{key}); the
// request id travels as Idempotency-Key.
func (m *MemoryClient) Put(ctx context.Context, namespace, key string, in carryon.MemoryPut) (*carryon.MemoryItem, error) {
	var out carryon.MemoryItem
	rid := in.RequestID
	in.RequestID = ""
	if err := m.c.do(ctx, call{method: "PUT", path: memoryPath(namespace, key), body: in, requestID: rid}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Get returns an item (GET /v1/memories/{namespace}/{key}).
func (m *MemoryClient) Get(ctx context.Context, namespace, key string) (*carryon.MemoryItem, error) {
	var out carryon.MemoryItem
	if err := m.c.do(ctx, call{method: "GET", path: memoryPath(namespace, key)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Delete removes an item (DELETE /v1/memories/{namespace}/{key}); the request id travels as
// Idempotency-Key.
func (m *MemoryClient) Delete(ctx context.Context, namespace, key string, opt carryon.RetryOptions) error {
	return m.c.do(ctx, call{method: "DELETE", path: memoryPath(namespace, key), requestID: opt.RequestID}, nil)
}

// List pages through the items by namespace and key (GET /v1/memories).
func (m *MemoryClient) List(ctx context.Context, f carryon.MemoryFilter) (*carryon.MemoryPage, error) {
	q := url.Values{}
	if f.Namespace != "" {
		q.Set("namespace", f.Namespace)
	}
	if f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.Cursor != "" {
		q.Set("cursor", f.Cursor)
	}
	var out carryon.MemoryPage
	if err := m.c.do(ctx, call{method: "GET", path: "/v1/memories", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Search returns the items most relevant to a query (POST /v1/memories/search).
func (m *MemoryClient) Search(ctx context.Context, in carryon.MemorySearch) (*carryon.MemoryResults, error) {
	var out carryon.MemoryResults
	if err := m.c.do(ctx, call{method: "POST", path: "/v1/memories/search", body: in}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
