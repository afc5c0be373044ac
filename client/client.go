package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/wire"
)

// Client calls a carryon server. It implements carryon.SessionService, carryon.UserService and
// carryon.RunService, so code written against the services works the same over HTTP. Errors the
// server answers come back as *carryon.Error with their code, message and recovery hints;
// transport failures are wrapped.
type Client struct {
	baseURL string
	key     string
	hc      *http.Client
	// streamRetries and streamBackoff bound the reconnects of an event stream (WithStreamRetry).
	streamRetries int
	streamBackoff time.Duration
}

var (
	_ carryon.SessionService = (*Client)(nil)
	_ carryon.UserService    = (*Client)(nil)
)

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the Client send its requests with hc instead of http.DefaultClient.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) { c.hc = hc }
}

// New returns a client of the server at baseURL (such as http://127.0.0.1:7070) that
// authenticates with the API key key.
func New(baseURL, key string, opts ...Option) *Client {
	c := &Client{baseURL: strings.TrimRight(baseURL, "/"), key: key, hc: http.DefaultClient,
		streamRetries: defaultStreamRetries, streamBackoff: defaultStreamBackoff}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Health checks that the server answers /healthz.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, call{method: "GET", path: "/healthz"}, nil)
}

// Ready checks that the server answers /readyz, that is, that it can serve.
func (c *Client) Ready(ctx context.Context) error {
	return c.do(ctx, call{method: "GET", path: "/readyz"}, nil)
}

// call is one request of the client.
type call struct {
	method, path string
	query        url.Values
	body         any
	// raw, when set, is the body as it is, sent as media type rawType (an import's bundle).
	raw     []byte
	rawType string
	// requestID is sent as Idempotency-Key; ifMatch as If-Match.
	requestID string
	ifMatch   *int64
	// key overrides the client's API key (Authenticate checks another one).
	key string
	// lastEventID, when set, resumes an event stream after that event (Last-Event-ID).
	lastEventID int64
}

// do sends a request and decodes a JSON answer into out (unless out is nil). A receipt in ctx is
// filled from the Idempotent-Replayed header.
func (c *Client) do(ctx context.Context, cl call, out any) error {
	resp, err := c.send(ctx, cl, wire.MediaJSON)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("carryon client: decoding the answer to %s %s: %w", cl.method, cl.path, err)
	}
	return nil
}

// send sends a request that accepts the media type accept and returns the successful answer with
// its body open for the caller to read and close. An error answer comes back as *carryon.Error.
// A receipt in ctx is filled from the Idempotent-Replayed header.
func (c *Client) send(ctx context.Context, cl call, accept string) (*http.Response, error) {
	u := c.baseURL + cl.path
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	var body io.Reader
	if cl.body != nil {
		b, err := json.Marshal(cl.body)
		if err != nil {
			return nil, fmt.Errorf("carryon client: encoding the %s %s body: %w", cl.method, cl.path, err)
		}
		body = bytes.NewReader(b)
	}
	if cl.raw != nil {
		body = bytes.NewReader(cl.raw)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, u, body)
	if err != nil {
		return nil, fmt.Errorf("carryon client: %w", err)
	}
	req.Header.Set("Accept", accept)
	if carryon.DoorFromContext(ctx) == carryon.DoorMCP {
		req.Header.Set(wire.DoorHeader, string(carryon.DoorMCP)) // carryon mcp (stdio): its runs are MCP's
	}
	if cl.body != nil {
		req.Header.Set("Content-Type", wire.MediaJSON)
	}
	if cl.raw != nil {
		req.Header.Set("Content-Type", cl.rawType)
	}
	key := c.key
	if cl.key != "" {
		key = cl.key
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if cl.requestID != "" {
		req.Header.Set("Idempotency-Key", cl.requestID)
	}
	if cl.ifMatch != nil {
		req.Header.Set("If-Match", wire.ETag(*cl.ifMatch))
	}
	if cl.lastEventID > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(cl.lastEventID, 10))
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("carryon client: %s %s: %w", cl.method, cl.path, err)
	}
	if rec := carryon.ReceiptFromContext(ctx); rec != nil {
		rec.Replayed = resp.Header.Get("Idempotent-Replayed") == "true"
		rec.Existing = cl.method == http.MethodPost && cl.path == "/v1/sessions" && resp.StatusCode == http.StatusOK
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		return nil, errorFromResponse(resp)
	}
	return resp, nil
}

// errorFromResponse turns an error answer into a *carryon.Error. A problem+json body gives the
// code, message and hints; any other body (a proxy's error page) gives a code from the status.
func errorFromResponse(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	e := &carryon.Error{}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		e.RetryAfterSeconds = s
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var p wire.Problem
	if (media == "application/problem+json" || media == wire.MediaJSON) && json.Unmarshal(raw, &p) == nil && p.Code != "" {
		e.Code, e.Message, e.ActiveRunID = p.Code, p.Detail, p.ActiveRunID
		if p.CurrentVersion != nil {
			e.CurrentVersion = *p.CurrentVersion
		}
		if e.Code == carryon.EVERSION && e.CurrentVersion == 0 && p.CurrentVersion == nil {
			e.CurrentVersion = versionOfETag(resp.Header.Get("ETag"))
		}
		return e
	}
	e.Code = wire.CodeOfStatus(resp.StatusCode)
	text := strings.TrimSpace(string(raw))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	e.Message = fmt.Sprintf("the server answered %s", resp.Status)
	if text != "" {
		e.Message += ": " + text
	}
	return e
}

// listAll reads every page of a listing at path, for a service method that answers it whole.
func listAll[T any](ctx context.Context, c *Client, path string) ([]T, error) {
	all := []T{}
	q := url.Values{"limit": {strconv.Itoa(carryon.MaxMessageWindow)}}
	for {
		var page struct {
			Items      []T    `json:"items"`
			NextCursor string `json:"next_cursor"`
		}
		if err := c.do(ctx, call{method: "GET", path: path, query: q}, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Items...)
		if page.NextCursor == "" {
			return all, nil
		}
		q.Set("cursor", page.NextCursor)
	}
}

// versionOfETag reads a session version from an ETag, or 0.
func versionOfETag(t string) int64 {
	n, _ := wire.ParseTag(t)
	return n
}

// escape escapes one path segment.
func escape(s string) string { return url.PathEscape(s) }

// runPath is the path of a run.
func runPath(id string) string { return "/v1/runs/" + escape(id) }
