package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/carryon-hub/carryon"
)

// LongTermClient is the caller's long-term memory on a server (/v1/memories). It implements
// carryon.LongTermService; get one with Client.LongTerm.
type LongTermClient struct{ c *Client }

var _ carryon.LongTermService = (*LongTermClient)(nil)

// LongTerm returns the long-term memory of the client's user. (A separate type, because the
// names Get, List and Delete of the Client already belong to sessions.)
func (c *Client) LongTerm() *LongTermClient { return &LongTermClient{c: c} }

func longTermPath(namespace, key string) string {
	return "/v1/memories/" + escape(namespace) + "/" + escape(key)
}

// Put stores value (and text) under (namespace, key) (PUT /v1/memories/{namespace}/{key}); the
// request id travels as Idempotency-Key, the expected version in the body.
func (m *LongTermClient) Put(ctx context.Context, namespace, key string, in carryon.LongTermPut) (*carryon.LongTermItem, error) {
	var out carryon.LongTermItem
	rid := in.RequestID
	in.RequestID = ""
	if err := m.c.do(ctx, call{method: "PUT", path: longTermPath(namespace, key), body: in, requestID: rid}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Get returns an item (GET /v1/memories/{namespace}/{key}).
func (m *LongTermClient) Get(ctx context.Context, namespace, key string) (*carryon.LongTermItem, error) {
	var out carryon.LongTermItem
	if err := m.c.do(ctx, call{method: "GET", path: longTermPath(namespace, key)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Delete removes an item (DELETE /v1/memories/{namespace}/{key}); the request id travels as
// Idempotency-Key, the expected version as If-Match.
func (m *LongTermClient) Delete(ctx context.Context, namespace, key string, opt carryon.WriteOptions) error {
	return m.c.do(ctx, call{method: "DELETE", path: longTermPath(namespace, key), requestID: opt.RequestID, ifMatch: opt.ExpectedVersion}, nil)
}

// List pages through the items by namespace and key (GET /v1/memories).
func (m *LongTermClient) List(ctx context.Context, f carryon.LongTermFilter) (*carryon.LongTermPage, error) {
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
	var out carryon.LongTermPage
	if err := m.c.do(ctx, call{method: "GET", path: "/v1/memories", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Search returns the items most relevant to a query (POST /v1/memories/search).
func (m *LongTermClient) Search(ctx context.Context, in carryon.LongTermSearch) (*carryon.LongTermResults, error) {
	var out carryon.LongTermResults
	if err := m.c.do(ctx, call{method: "POST", path: "/v1/memories/search", body: in}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Add remembers a fact under a key the server chooses, or consolidates it into a near duplicate
// (POST /v1/memories/{namespace}).
func (m *LongTermClient) Add(ctx context.Context, namespace string, in carryon.LongTermAdd) (*carryon.LongTermAdded, error) {
	var out carryon.LongTermAdded
	rid := in.RequestID
	in.RequestID = ""
	if err := m.c.do(ctx, call{method: "POST", path: "/v1/memories/" + escape(namespace), body: in, requestID: rid}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Versions lists the earlier values of an item that consolidating writes replaced
// (GET /v1/memories/{namespace}/{key}/versions).
func (m *LongTermClient) Versions(ctx context.Context, namespace, key string) (*carryon.LongTermVersions, error) {
	var out carryon.LongTermVersions
	if err := m.c.do(ctx, call{method: "GET", path: longTermPath(namespace, key) + "/versions"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
