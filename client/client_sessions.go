package client

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/wire"
)

// Create makes a session owned by the caller (POST /v1/sessions). A receipt in ctx learns
// whether an external id named an existing session (a 200 answer: Existing).
func (c *Client) Create(ctx context.Context, in carryon.NewSession) (*carryon.Session, error) {
	var out carryon.Session
	rid := in.RequestID
	in.RequestID = ""
	err := c.do(ctx, call{method: "POST", path: "/v1/sessions", body: in, requestID: rid}, &out)
	return sessionOrNil(&out, err)
}

// CreateSession is Create under its older name.
//
// Deprecated: use Create; CreateSession goes in the next release.
func (c *Client) CreateSession(ctx context.Context, in carryon.NewSession) (*carryon.Session, error) {
	return c.Create(ctx, in)
}

// Get returns a session with its working memory and last messages (GET /v1/sessions/{id}).
func (c *Client) Get(ctx context.Context, id string, opt carryon.GetOptions) (*carryon.SessionView, error) {
	q := url.Values{}
	switch {
	case opt.Messages < 0:
		q.Set("messages", "0")
	case opt.Messages > 0:
		q.Set("messages", strconv.Itoa(opt.Messages))
	}
	var out carryon.SessionView
	if err := c.do(ctx, call{method: "GET", path: "/v1/sessions/" + escape(id), query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetSession is Get under its older name.
//
// Deprecated: use Get; GetSession goes in the next release.
func (c *Client) GetSession(ctx context.Context, id string, opt carryon.GetOptions) (*carryon.SessionView, error) {
	return c.Get(ctx, id, opt)
}

// List returns a page of the caller's sessions (GET /v1/sessions).
func (c *Client) List(ctx context.Context, f carryon.SessionFilter) (*carryon.SessionPage, error) {
	q := url.Values{}
	if f.Status != "" {
		q.Set("status", string(f.Status))
	}
	if f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.Cursor != "" {
		q.Set("cursor", f.Cursor)
	}
	if f.ExternalID != "" {
		q.Set("external_id", f.ExternalID)
	}
	if f.Query != "" {
		q.Set("q", f.Query)
	}
	for k, v := range f.Metadata {
		q.Set("metadata["+k+"]", v)
	}
	if f.Agent != "" {
		q.Set("agent", f.Agent)
	}
	for name, t := range map[string]time.Time{"created_after": f.CreatedAfter, "created_before": f.CreatedBefore,
		"updated_after": f.UpdatedAfter, "updated_before": f.UpdatedBefore} {
		if !t.IsZero() {
			q.Set(name, t.UTC().Format(time.RFC3339Nano))
		}
	}
	var out carryon.SessionPage
	if err := c.do(ctx, call{method: "GET", path: "/v1/sessions", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Update changes title, metadata or idle TTL (PATCH /v1/sessions/{id}).
func (c *Client) Update(ctx context.Context, id string, in carryon.SessionUpdate) (*carryon.Session, error) {
	var out carryon.Session
	rid := in.RequestID
	in.RequestID = ""
	err := c.do(ctx, call{method: "PATCH", path: "/v1/sessions/" + escape(id), body: in, requestID: rid}, &out)
	return sessionOrNil(&out, err)
}

// Close stops writes to a session and keeps its history (POST /v1/sessions/{id}/close).
func (c *Client) Close(ctx context.Context, id string, opt carryon.WriteOptions) (*carryon.Session, error) {
	return c.stateChange(ctx, id, "close", opt)
}

// Restore reopens a closed or expired session (POST /v1/sessions/{id}/restore).
func (c *Client) Restore(ctx context.Context, id string, opt carryon.WriteOptions) (*carryon.Session, error) {
	return c.stateChange(ctx, id, "restore", opt)
}

func (c *Client) stateChange(ctx context.Context, id, verb string, opt carryon.WriteOptions) (*carryon.Session, error) {
	var out carryon.Session
	body := carryon.WriteOptions{ExpectedVersion: opt.ExpectedVersion}
	err := c.do(ctx, call{method: "POST", path: "/v1/sessions/" + escape(id) + "/" + verb, body: body, requestID: opt.RequestID}, &out)
	return sessionOrNil(&out, err)
}

// Delete removes a session and everything in it (DELETE /v1/sessions/{id}). The expected version
// travels as If-Match, since a DELETE body is not reliably forwarded.
func (c *Client) Delete(ctx context.Context, id string, opt carryon.WriteOptions) error {
	return c.do(ctx, call{method: "DELETE", path: "/v1/sessions/" + escape(id), ifMatch: opt.ExpectedVersion, requestID: opt.RequestID}, nil)
}

// Fork makes a new session that shares this one's history (POST /v1/sessions/{id}/fork).
func (c *Client) Fork(ctx context.Context, id string, in carryon.ForkInput) (*carryon.Session, error) {
	var out carryon.Session
	rid := in.RequestID
	in.RequestID = ""
	err := c.do(ctx, call{method: "POST", path: "/v1/sessions/" + escape(id) + "/fork", body: in, requestID: rid}, &out)
	return sessionOrNil(&out, err)
}

// AppendMessages appends messages in order (POST /v1/sessions/{id}/messages). Only the messages
// and the write options travel: what links a write to a run is for runners on the server, which
// call the services directly.
func (c *Client) AppendMessages(ctx context.Context, id string, in carryon.AppendInput) (*carryon.AppendResult, error) {
	body := wire.AppendRequest{Messages: in.Messages, WorkingMemoryPatch: in.WorkingMemoryPatch, WriteOptions: carryon.WriteOptions{ExpectedVersion: in.ExpectedVersion}}
	var out carryon.AppendResult
	if err := c.do(ctx, call{method: "POST", path: "/v1/sessions/" + escape(id) + "/messages", body: body, requestID: in.RequestID}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteMessage deletes one message of a session by seq (DELETE /v1/sessions/{id}/messages/{seq})
// and returns the session at its new version.
func (c *Client) DeleteMessage(ctx context.Context, id string, seq int64, opt carryon.WriteOptions) (*carryon.Session, error) {
	var out carryon.Session
	err := c.do(ctx, call{method: "DELETE", path: "/v1/sessions/" + escape(id) + "/messages/" + strconv.FormatInt(seq, 10),
		ifMatch: opt.ExpectedVersion, requestID: opt.RequestID}, &out)
	return sessionOrNil(&out, err)
}

// ListMessages pages through a session's messages, oldest first (GET /v1/sessions/{id}/messages).
func (c *Client) ListMessages(ctx context.Context, id string, f carryon.MessageFilter) (*carryon.MessagePage, error) {
	q := url.Values{}
	if f.Cursor != "" {
		q.Set("cursor", f.Cursor)
	}
	if f.AfterSeq != 0 {
		q.Set("after_seq", strconv.FormatInt(f.AfterSeq, 10))
	}
	if f.BeforeSeq != 0 {
		q.Set("before_seq", strconv.FormatInt(f.BeforeSeq, 10))
	}
	if f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.IncludeDeleted {
		q.Set("include_deleted", "true")
	}
	var out carryon.MessagePage
	if err := c.do(ctx, call{method: "GET", path: "/v1/sessions/" + escape(id) + "/messages", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetWorkingMemory returns a session's working memory (GET /v1/sessions/{id}/working_memory).
func (c *Client) GetWorkingMemory(ctx context.Context, id string) (*carryon.WorkingMemoryState, error) {
	var out carryon.WorkingMemoryState
	if err := c.do(ctx, call{method: "GET", path: "/v1/sessions/" + escape(id) + "/working_memory"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PatchWorkingMemory applies a JSON Merge Patch to a session's working memory
// (PATCH /v1/sessions/{id}/working_memory). Only the patch and the write options travel.
func (c *Client) PatchWorkingMemory(ctx context.Context, id string, in carryon.WorkingMemoryPatch) (*carryon.WorkingMemoryState, error) {
	body := wire.WorkingMemoryPatchRequest{Patch: in.Patch, WriteOptions: carryon.WriteOptions{ExpectedVersion: in.ExpectedVersion}}
	var out carryon.WorkingMemoryState
	if err := c.do(ctx, call{method: "PATCH", path: "/v1/sessions/" + escape(id) + "/working_memory", body: body, requestID: in.RequestID}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// WorkingMemoryHistory lists working memory revisions, newest first (GET /v1/sessions/{id}/working_memory/history).
func (c *Client) WorkingMemoryHistory(ctx context.Context, id string, f carryon.RevisionFilter) (*carryon.RevisionPage, error) {
	q := url.Values{}
	if f.Cursor != "" {
		q.Set("cursor", f.Cursor)
	}
	if f.BeforeWorkingMemoryVersion != 0 {
		q.Set("before", strconv.FormatInt(f.BeforeWorkingMemoryVersion, 10))
	}
	if f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var out carryon.RevisionPage
	if err := c.do(ctx, call{method: "GET", path: "/v1/sessions/" + escape(id) + "/working_memory/history", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// WorkingMemoryDiff compares two working memory revisions (GET /v1/sessions/{id}/working_memory/diff).
func (c *Client) WorkingMemoryDiff(ctx context.Context, id string, from, to int64) (*carryon.WorkingMemoryDiff, error) {
	q := url.Values{"from": {strconv.FormatInt(from, 10)}, "to": {strconv.FormatInt(to, 10)}}
	var out carryon.WorkingMemoryDiff
	if err := c.do(ctx, call{method: "GET", path: "/v1/sessions/" + escape(id) + "/working_memory/diff", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func sessionOrNil(s *carryon.Session, err error) (*carryon.Session, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}
