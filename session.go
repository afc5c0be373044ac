package carryon

import (
	"context"
	"encoding/json"
	"time"
)

// SessionStatus is the life-cycle state of a session.
type SessionStatus string

// Session states. A session is created active; close and expiry stop writes but keep history;
// restore makes it active again.
const (
	SessionActive  SessionStatus = "active"
	SessionClosed  SessionStatus = "closed"
	SessionExpired SessionStatus = "expired"
)

// Session is one durable conversation and execution state, owned by one user. Version goes up by one
// on every write to the session or to anything inside it (messages, working memory).
type Session struct {
	ID      string `json:"id"`
	OwnerID string `json:"owner_id"`
	// ExternalID is the id the client chose at create, unique among the owner's sessions; empty
	// when it chose none.
	ExternalID string `json:"external_id,omitempty"`
	Title      string `json:"title"`
	// TitleDerived says that Title was taken from the session's first input (the OpenAI door's
	// conversations) rather than set by the user: deleting that message clears it.
	TitleDerived bool          `json:"-"`
	Status       SessionStatus `json:"status"`
	Version      int64         `json:"version"`
	// Agent is the agent profile the session's runs use unless a run names another.
	Agent string `json:"agent"`
	// ParentID and ForkSeq name the session this one was forked from and the last parent message it
	// shares (copy on write: the parent's messages up to ForkSeq are read through, never copied).
	ParentID             string          `json:"parent_id,omitempty"`
	ForkSeq              int64           `json:"fork_seq,omitempty"`
	ForkVersion          int64           `json:"fork_version,omitempty"`
	CreatedAt            time.Time       `json:"created_at"`
	UpdatedAt            time.Time       `json:"updated_at"`
	LastActiveAt         time.Time       `json:"last_active_at"`
	ExpiresAt            time.Time       `json:"expires_at"`
	IdleTTLSeconds       int64           `json:"idle_ttl_seconds"`
	MessageCount         int64           `json:"message_count"`
	LastSeq              int64           `json:"last_seq"`
	WorkingMemoryVersion int64           `json:"memory_version"`
	Metadata             json.RawMessage `json:"metadata,omitempty"`
	// Budget is the session's budget (NewSession.Budget, SessionUpdate.Budget), nil for none. The
	// answers of create, update and get carry it; a listing does not.
	Budget *Budget `json:"budget,omitempty"`
	// Spend is what the session's runs spent on model calls; only get (SessionService.Get) fills it.
	Spend *Spend `json:"spend,omitempty"`
}

// Expired reports whether the session is past its idle TTL at now (or was marked expired).
func (s *Session) Expired(now time.Time) bool {
	return s.Status == SessionExpired || (s.Status == SessionActive && !now.Before(s.ExpiresAt))
}

// StatusAt returns the status a client sees at now: an active session past its expiry reads as expired.
func (s *Session) StatusAt(now time.Time) SessionStatus {
	if s.Status == SessionActive && !now.Before(s.ExpiresAt) {
		return SessionExpired
	}
	return s.Status
}

// SessionView is a session with what a client needs to continue it: the working memory and the last
// messages.
type SessionView struct {
	Session
	WorkingMemory WorkingMemory `json:"working_memory"`
	Messages      []*Message    `json:"messages"`
	// MessagesTruncated says the window stopped at the read budget: Messages are the newest that
	// fit, and older ones are read with the messages listing (before_seq: the first seq here).
	MessagesTruncated bool `json:"messages_truncated,omitempty"`
}

// NewSession is the input of SessionService.Create.
type NewSession struct {
	Title string `json:"title,omitempty"`
	// TitleDerived says that Title is the start of the session's first input, not a title the
	// user chose (see Session.TitleDerived).
	TitleDerived   bool            `json:"-"`
	Metadata       json.RawMessage `json:"metadata,omitempty"`
	IdleTTLSeconds *int64          `json:"idle_ttl_seconds,omitempty"`
	WorkingMemory  WorkingMemory   `json:"working_memory,omitempty"`
	// Messages are the session's first messages, appended in the same write (held to the rules of
	// an append; the session is then at version 2): a crash stores the session with them or not at
	// all.
	Messages []NewMessage `json:"messages,omitempty"`
	// Agent binds the session to an agent profile (default "default"); EINVALID for an unknown one.
	Agent string `json:"agent,omitempty"`
	// Budget limits what the session's runs spend (docs/API.md, "Budgets"); nil for none.
	Budget *Budget `json:"budget,omitempty"`
	// ExternalID is an id the client chooses for the session (at most MaxExternalIDLen
	// characters of printable text), unique among the caller's sessions. Creating a session with an
	// external id the caller already used answers that session unchanged, unless IfExists says
	// IfExistsError.
	ExternalID string `json:"external_id,omitempty"`
	// IfExists says what a create whose ExternalID names an existing session does:
	// IfExistsReturn (the default) answers the existing session, IfExistsError refuses with
	// ECONFLICT.
	IfExists IfExists `json:"if_exists,omitempty"`
	WriteOptions
}

// IfExists is what a create does when its external id names an existing session
// (NewSession.IfExists).
type IfExists string

// IfExists values.
const (
	IfExistsReturn IfExists = "return"
	IfExistsError  IfExists = "error"
)

// MaxExternalIDLen is the longest external id of a session, in characters.
const MaxExternalIDLen = 200

// SessionUpdate is the input of SessionService.Update; nil fields are left alone.
type SessionUpdate struct {
	Title          *string         `json:"title,omitempty"`
	Metadata       json.RawMessage `json:"metadata,omitempty"`
	IdleTTLSeconds *int64          `json:"idle_ttl_seconds,omitempty"`
	// Budget replaces the session's budget; an empty one ({}) removes it.
	Budget *Budget `json:"budget,omitempty"`
	WriteOptions
}

// ForkInput is the input of SessionService.Fork.
type ForkInput struct {
	// AtVersion forks the session as it was at that version; zero means the current version.
	AtVersion int64  `json:"at_version,omitempty"`
	Title     string `json:"title,omitempty"`
	WriteOptions
}

// SessionFilter selects sessions of the caller for SessionService.List.
type SessionFilter struct {
	Status SessionStatus `json:"status,omitempty"`
	Limit  int           `json:"limit,omitempty"`
	Cursor string        `json:"cursor,omitempty"`
	// ExternalID, when set, selects the caller's session with that external id (a page of at
	// most one).
	ExternalID string `json:"external_id,omitempty"`
	// Query, when set, searches: the sessions whose title holds every word of it, or one of
	// whose visible messages does (each as a whole word, the last also as the start of one), in
	// the same order as without it. A deleted message is never matched; a fork matches the
	// messages it inherits. At most MaxSessionQueryLength bytes and 8 words.
	Query string `json:"q,omitempty"`
	// Metadata selects the sessions whose metadata has each key with exactly that string value.
	Metadata map[string]string `json:"metadata,omitempty"`
	// Agent selects the sessions of that agent profile.
	Agent string `json:"agent,omitempty"`
	// CreatedAfter, CreatedBefore, UpdatedAfter and UpdatedBefore bound the sessions' CreatedAt
	// and UpdatedAt (exclusive); a zero time is no bound.
	CreatedAfter  time.Time `json:"created_after,omitzero"`
	CreatedBefore time.Time `json:"created_before,omitzero"`
	UpdatedAfter  time.Time `json:"updated_after,omitzero"`
	UpdatedBefore time.Time `json:"updated_before,omitzero"`
}

// MaxSessionQueryLength is the longest session search text (SessionFilter.Query) in bytes.
const MaxSessionQueryLength = 256

// MaxSessionMetadataFilters is how many metadata filters one session listing may hold.
const MaxSessionMetadataFilters = 8

// SessionPage is one page of sessions, newest first by creation.
type SessionPage struct {
	Items      []*Session `json:"items"`
	NextCursor string     `json:"next_cursor,omitempty"`
}

// GetOptions shape SessionService.Get.
type GetOptions struct {
	// Messages is how many of the last messages to include; 0 means DefaultMessageWindow, -1 none.
	Messages int
}

// SessionService owns sessions and everything in them. The caller is the user in the context; a
// session of another user is ENOTFOUND, exactly like a missing one. Every write accepts
// WriteOptions (EVERSION on a stale expected version, EKEYREUSED / EINFLIGHT for request ids) and is
// refused with ECLOSED on a closed session and EEXPIRED on an expired one.
type SessionService interface {
	// Create makes a session owned by the caller. With an external id the caller used before it
	// answers that session unchanged and sets WriteReceipt.Existing, or ECONFLICT when IfExists is
	// IfExistsError. EINVALID, EUNAUTHORIZED.
	Create(ctx context.Context, in NewSession) (*Session, error)
	// CreateSession is a synonym of Create.
	CreateSession(ctx context.Context, in NewSession) (*Session, error)
	// Get returns a session with its working memory and last messages. Reads work on closed and
	// expired sessions. ENOTFOUND.
	Get(ctx context.Context, id string, opt GetOptions) (*SessionView, error)
	// GetSession is a synonym of Get.
	GetSession(ctx context.Context, id string, opt GetOptions) (*SessionView, error)
	// List returns the caller's sessions, newest first by creation (an order a write does not
	// change, so paging never skips a session written meanwhile). EINVALID.
	List(ctx context.Context, f SessionFilter) (*SessionPage, error)
	// Update changes title, metadata (replaced, not merged) or idle TTL; an update that changes
	// nothing keeps the version. ENOTFOUND, EINVALID, EVERSION, ECLOSED, EEXPIRED.
	Update(ctx context.Context, id string, in SessionUpdate) (*Session, error)
	// Close stops writes and keeps history; closing a closed session changes nothing. ENOTFOUND, EVERSION.
	Close(ctx context.Context, id string, opt WriteOptions) (*Session, error)
	// Restore reopens a closed or expired session and restarts its idle clock; an active session is
	// returned unchanged. ENOTFOUND, EVERSION.
	Restore(ctx context.Context, id string, opt WriteOptions) (*Session, error)
	// Delete removes the session and everything in it. Forks of it keep their shared history. ENOTFOUND, EVERSION.
	Delete(ctx context.Context, id string, opt WriteOptions) error
	// Fork makes a new session that shares this one's history up to AtVersion (copy on write, O(1)).
	// ENOTFOUND, EINVALID (a version the session never had or that is in the future).
	Fork(ctx context.Context, id string, in ForkInput) (*Session, error)
	// AppendMessages appends messages in order. ENOTFOUND, EINVALID, EVERSION, ECLOSED, EEXPIRED.
	AppendMessages(ctx context.Context, id string, in AppendInput) (*AppendResult, error)
	// DeleteMessage hides one message (by seq) from the session's reads and the model's context
	// and moves the session to its next version; forks made before keep it. ENOTFOUND, EINVALID,
	// EVERSION, ECLOSED, EEXPIRED.
	DeleteMessage(ctx context.Context, id string, seq int64, opt WriteOptions) (*Session, error)
	// ListMessages pages through messages in order, oldest first. ENOTFOUND, EINVALID.
	ListMessages(ctx context.Context, id string, f MessageFilter) (*MessagePage, error)
	// GetWorkingMemory returns the working memory document. ENOTFOUND.
	GetWorkingMemory(ctx context.Context, id string) (*WorkingMemoryState, error)
	// PatchWorkingMemory applies a JSON Merge Patch (RFC 7396). ENOTFOUND, EINVALID, EVERSION, ECLOSED, EEXPIRED.
	PatchWorkingMemory(ctx context.Context, id string, in WorkingMemoryPatch) (*WorkingMemoryState, error)
	// WorkingMemoryHistory lists working memory revisions, newest first. ENOTFOUND.
	WorkingMemoryHistory(ctx context.Context, id string, f RevisionFilter) (*RevisionPage, error)
	// WorkingMemoryDiff compares two revisions of the working memory. ENOTFOUND, EINVALID.
	WorkingMemoryDiff(ctx context.Context, id string, from, to int64) (*WorkingMemoryDiff, error)
}
