// Package store defines the one small interface every database driver implements, grouped by
// aggregate (users, sessions, messages, working memory, idempotency keys, runs, long-term
// memory, webhooks, budgets and spend). Drivers live in subpackages (store/sqlite,
// store/postgres), share their SQL through store/sqlq (each statement written once) and must pass
// the conformance suite in store/storetest.
//
// The store knows no business rules: it never decides whether a write is allowed (the hub services
// do), it only stores and reads what it is told, inside transactions the services open. Every query
// carries the owner: a session of another user is ENOTFOUND, exactly like a missing one.
//
// Drivers normalise their errors at this boundary into *carryon.Error codes: ENOTFOUND for a missing
// or foreign row, EVERSION (with CurrentVersion) for a conditional update that lost, ECONFLICT for a
// unique key that is taken. Anything else is an internal error.
//
// Times are stored with microsecond precision (the coarsest of the drivers); callers truncate.
package store

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
)

// Store is a database opened by a driver.
type Store interface {
	// Read runs fn in a read-only transaction that sees one consistent snapshot. It returns only
	// once every commit fn could have seen is durable (SQLite may still be flushing the latest
	// one when fn reads it), so fn keeps what it reads to itself until Read returns.
	Read(ctx context.Context, fn func(Tx) error) error
	// Write runs fn in a read-write transaction and commits when fn returns nil; otherwise it rolls
	// back fn's effects and returns fn's error. Write transactions are serialised per session at
	// least (SQLite: BEGIN IMMEDIATE; Postgres: row locks), so read-check-write inside fn is safe.
	// A driver may roll back and run fn again in a new transaction when the database aborts it
	// (Postgres: a deadlock or serialization failure), so fn must touch nothing but tx and reset
	// what it sets.
	//
	// A driver may also batch concurrent writes (SQLite's group commit): fn then runs in one
	// transaction with other callers' fns, one after another, on another goroutine than the
	// caller's, and sees the effects of the fns before it. Its own error (or panic, which the
	// driver recovers into an EINTERNAL error) undoes only its own effects, and a failed commit
	// fails every fn of the batch that succeeded. Write returns only after the commit that holds
	// fn's effects is durable, as without batching. fn must therefore not call Read or Write of
	// the same store, and must not wait for another writer. fn gets a context of its own, marked
	// as inside this store's write (WithinWrite); a Write given that context, or one derived from
	// it, is refused with EINTERNAL instead of waiting for itself.
	Write(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error
	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	// Close releases the database.
	Close() error
}

// Tx is a transaction: every aggregate's operations.
type Tx interface {
	Users
	Sessions
	Messages
	WorkingMemory
	Idempotency
	Runs
	LongTerm
	LongTermVectors
	Jobs
	Extractions
	Forgetting
	Retention
	Webhooks
	Schedules
	Bundles
	Limits
	Budgets
	Usage
}

// Users stores users and API keys.
type Users interface {
	// InsertUser stores a new user. ECONFLICT when the name is taken.
	InsertUser(ctx context.Context, u *carryon.User) error
	// GetUser finds a user by id or by name. ENOTFOUND.
	GetUser(ctx context.Context, idOrName string) (*carryon.User, error)
	// LockOwner checks that the user exists and is not being forgotten, and in a write
	// transaction of a database that locks rows holds the user's row shared to the end, so that
	// forgetting the user (store.Forgetting's MarkForgetting) waits for the transaction. A write
	// that makes something new for a user (a session, a fork, a long-term item) calls it first: a
	// request that authenticated before a forget started makes nothing the forget has already
	// passed. EUNAUTHORIZED when the user is gone or being forgotten.
	LockOwner(ctx context.Context, userID string) error
	// ListUsers returns every user ordered by name.
	ListUsers(ctx context.Context) ([]*carryon.User, error)
	// InsertKey stores a new key. ENOTFOUND when the user does not exist.
	InsertKey(ctx context.Context, k *carryon.APIKey) error
	// KeyByHash returns an unrevoked key with that hash and its user. ENOTFOUND.
	KeyByHash(ctx context.Context, hash string) (*carryon.APIKey, *carryon.User, error)
	// ListKeys returns a user's keys, oldest first, revoked ones included.
	ListKeys(ctx context.Context, userID string) ([]*carryon.APIKey, error)
	// RevokeKey marks a key revoked at t. ENOTFOUND (also when already revoked).
	RevokeKey(ctx context.Context, keyID string, t time.Time) error
	// UserSettings returns the user's settings (carryon.DefaultUserSettings when they changed
	// none).
	UserSettings(ctx context.Context, userID string) (carryon.UserSettings, error)
	// PutUserSettings stores the user's settings. ENOTFOUND when the user does not exist.
	PutUserSettings(ctx context.Context, userID string, s carryon.UserSettings) error
}

// SessionQuery selects a page of one owner's sessions ordered by CreatedAt descending, then ID
// descending: keys that never change, so a session written while a client pages keeps its place
// (an order by activity would move it past the client's position and skip it).
type SessionQuery struct {
	// Status filters by the status a client sees at Now: active means active and not past
	// ExpiresAt; expired means marked expired or active and past ExpiresAt. Empty means all.
	Status carryon.SessionStatus
	Now    time.Time
	// ExternalID, when set, selects only the session with that external id (at most one).
	ExternalID string
	// AfterCreated and AfterID continue after the last row of the previous page (keyset paging);
	// AfterID empty means the first page.
	AfterCreated time.Time
	AfterID      string
	Limit        int
	// Terms, when set, selects the sessions whose title holds every term (as a substring, case
	// folded) or one of whose visible messages holds every term as a word, the last term also as
	// the start of a word (a search box's word being typed). Deleted messages are never matched;
	// a fork matches the messages it inherits. Terms come from SearchQueryTerms: letters and
	// digits only.
	Terms []string
	// Metadata selects the sessions whose metadata has each key with exactly that string value.
	Metadata []MetadataMatch
	// Agent, when set, selects the sessions of that agent profile.
	Agent string
	// CreatedAfter, CreatedBefore, UpdatedAfter and UpdatedBefore bound CreatedAt and UpdatedAt
	// (exclusive); a zero time is no bound.
	CreatedAfter, CreatedBefore, UpdatedAfter, UpdatedBefore time.Time
	// Plan forces how a search with Terms runs (tests and benchmarks compare the plans; every
	// plan answers the same page). The zero value lets the driver choose.
	Plan SearchPlan
	// ProbeWindow, when above zero, replaces DefaultProbeWindow for SearchPlanAuto (tests move
	// the point where the probe gives up).
	ProbeWindow int
	// ProbeAbove, when above zero, replaces the driver's count of matching documents from which
	// SearchPlanAuto probes (tests probe small data); a driver that estimates the matches
	// instead of counting them (PostgreSQL) then always probes.
	ProbeAbove int
}

// SearchPlan is how a session search finds its page.
type SearchPlan int

const (
	// SearchPlanAuto probes the owner's newest sessions one by one, up to a window of
	// max(ProbeWindow, 4 × Limit) of them, and answers if the page fills there; otherwise, or
	// where the driver finds probing dearer than collecting (few matches), it collects.
	SearchPlanAuto SearchPlan = iota
	// SearchPlanCollect collects every matching document first, then keeps the newest sessions
	// they name: its cost grows with the matches (cheap for a rare word).
	SearchPlanCollect
	// SearchPlanProbe walks all of the owner's sessions newest first and asks the index, for
	// each, whether one of its documents matches, until the page is full: its cost grows with
	// the sessions walked (cheap for a common word).
	SearchPlanProbe
)

// DefaultProbeWindow is how many of the owner's sessions SearchPlanAuto probes at least before
// it gives up and collects.
const DefaultProbeWindow = 100

// MetadataMatch is one metadata filter of a SessionQuery: a top-level key of the session's
// metadata whose value is the JSON string Value. Key holds only MetadataKeyChars.
type MetadataMatch struct {
	Key, Value string
}

// SessionRef names a session and its owner.
type SessionRef struct {
	OwnerID string
	ID      string
}

// Sessions stores session rows.
type Sessions interface {
	// InsertSession stores a new session row. ECONFLICT when the id exists or the owner has a
	// session with the same ExternalID.
	InsertSession(ctx context.Context, s *carryon.Session) error
	// GetSession returns the owner's session. ENOTFOUND when missing or owned by someone else.
	GetSession(ctx context.Context, owner, id string) (*carryon.Session, error)
	// LockSession takes the owner's session's row lock for the rest of a write transaction, where
	// the database locks rows (PostgreSQL); where write transactions are serialised (SQLite) the
	// transaction holds every lock already and it does nothing. A missing session is no error
	// here: the caller's next read of it reports that.
	LockSession(ctx context.Context, owner, id string) error
	// ListSessions returns a page of the owner's sessions.
	ListSessions(ctx context.Context, owner string, q SessionQuery) ([]*carryon.Session, error)
	// UpdateSession stores every mutable field of s (title, status, version, times, counters,
	// metadata, idle TTL) if the stored row belongs to s.OwnerID and is at version prev. ENOTFOUND
	// when missing or foreign; EVERSION with CurrentVersion when the version moved.
	UpdateSession(ctx context.Context, s *carryon.Session, prev int64) error
	// DeleteSession removes the session and every row in it (messages, working memory and its
	// revisions, runs and their rows, the request ids recorded with its SessionID). Forks that
	// share its messages get a copy of the shared part first, so they keep their whole history.
	// ENOTFOUND.
	DeleteSession(ctx context.Context, owner, id string) error
	// SessionStorage returns the rows and bytes of the owner's session by kind, in one
	// statement: every kind the database holds, carryon.StorageMessages to
	// carryon.StorageSearchIndex in the order of carryon.SessionStorage's doc (workspace files
	// are not the database's). A fork counts its own rows and the search documents it has (a
	// copy of its parent's). ENOTFOUND when the session is not the owner's.
	SessionStorage(ctx context.Context, owner, id string) ([]carryon.StorageUse, error)
	// PurgeableSessions returns up to q.Limit sessions of any owner that q selects, oldest first.
	// It is for the system sweeper only.
	PurgeableSessions(ctx context.Context, q PurgeQuery) ([]SessionRef, error)
}

// PurgeQuery selects the sessions the system sweeper may delete. Expiry and closing are told
// apart: an expired session is purged a horizon after it expired, a closed one only when a
// retention is set (ClosedBefore not zero), since closing a session keeps its history.
type PurgeQuery struct {
	// ExpiredBefore selects expired sessions (status expired, or active and past ExpiresAt)
	// whose ExpiresAt is before it.
	ExpiredBefore time.Time
	// ClosedBefore, when not zero, also selects closed sessions whose UpdatedAt (when they were
	// closed: a closed session takes no writes) is before it. Zero selects no closed session.
	ClosedBefore time.Time
	// Limit bounds the answer; zero or less means no limit.
	Limit int
}

// Messages stores the append-only message history. A session's visible history is its ancestors'
// messages up to each fork point followed by its own; the readers below walk that chain, so a fork
// costs O(1) to make.
type Messages interface {
	// InsertMessages stores messages whose SessionID, Seq, Version and CreatedAt are set by the
	// caller. ENOTFOUND when the session is not the owner's; ECONFLICT on a seq that exists.
	InsertMessages(ctx context.Context, owner string, msgs []*carryon.Message) error
	// LastMessages returns the last limit visible messages of s, oldest first, reading O(limit) rows.
	LastMessages(ctx context.Context, owner string, s *carryon.Session, limit int) ([]*carryon.Message, error)
	// MessagesAfter returns up to limit visible messages of s with seq > after, oldest first.
	MessagesAfter(ctx context.Context, owner string, s *carryon.Session, after int64, limit int) ([]*carryon.Message, error)
	// MessagesBefore returns the last limit visible messages of s with seq < before, oldest
	// first, reading O(limit) rows.
	MessagesBefore(ctx context.Context, owner string, s *carryon.Session, before int64, limit int) ([]*carryon.Message, error)
	// Summaries returns the visible messages of kind summary of s (its compactions, inherited
	// ones included), oldest first, reading only them (an index holds them).
	Summaries(ctx context.Context, owner string, s *carryon.Session) ([]*carryon.Message, error)
	// SeqAtVersion returns the highest visible seq of s stored at a session version <= v, or 0.
	SeqAtVersion(ctx context.Context, owner string, s *carryon.Session, v int64) (int64, error)
	// DeleteMessage hides the visible message seq of s from every later read of s (a tombstone
	// at session version v, the version the delete moves s to) and redacts the copies of its
	// text in the same transaction: the row is erased unless a fork that shares it still sees
	// it (that fork keeps it); the copies tied to s (its runs, their events, its request ids'
	// answers) are emptied. A summary of s that covers it is deleted too (s.MessageCount lowered
	// by one for each; the message itself is the caller's to count) and a title derived from
	// it cleared in s, which the caller stores. ENOTFOUND when s has no visible message seq.
	DeleteMessage(ctx context.Context, owner string, s *carryon.Session, seq, v int64, at time.Time) error
	// MessageTombstones returns the tombstones of s with after < seq <= upTo, in seq order, as
	// messages with only SessionID (s.ID), Seq, Deleted, Version (the session version of the
	// delete; 1 for one a fork copied from its parent), CreatedAt (when it was deleted), and the
	// Role and Kind of the hidden message set: never its content. ENOTFOUND when s is not the
	// owner's.
	MessageTombstones(ctx context.Context, owner string, s *carryon.Session, after, upTo int64) ([]*carryon.Message, error)
	// CopyMessageDeletions gives a fork just stored the tombstones its parent had at parent
	// version at on the history the fork shares (seq <= ForkSeq), and returns how many it copied.
	CopyMessageDeletions(ctx context.Context, owner string, child *carryon.Session, at int64) (int64, error)
	// IndexFork gives the fork child (stored, its tombstones copied) the search documents of the
	// messages it shows: its parent's for the seqs it shares, and those of messages its parent
	// deleted after the fork's version that the fork still shows.
	IndexFork(ctx context.Context, owner string, child *carryon.Session, at int64) error
}

// WorkingMemory stores each session's working memory document and its revisions.
type WorkingMemory interface {
	// GetWorkingMemory returns the current document and its memory version; an empty document and 0 when
	// it was never written. ENOTFOUND when the session is not the owner's.
	GetWorkingMemory(ctx context.Context, owner, sessionID string) (carryon.WorkingMemory, int64, error)
	// InsertWorkingMemoryRevision stores a revision and makes its document the current one. ENOTFOUND when
	// the session is not the owner's; ECONFLICT when the memory version exists.
	InsertWorkingMemoryRevision(ctx context.Context, owner string, r *carryon.WorkingMemoryRevision) error
	// GetWorkingMemoryRevision returns one revision by memory version. ENOTFOUND.
	GetWorkingMemoryRevision(ctx context.Context, owner, sessionID string, workingMemoryVersion int64) (*carryon.WorkingMemoryRevision, error)
	// WorkingMemoryAtVersion returns the newest revision stored at a session version <= v, or nil.
	WorkingMemoryAtVersion(ctx context.Context, owner, sessionID string, v int64) (*carryon.WorkingMemoryRevision, error)
	// ListWorkingMemoryRevisions returns up to limit revisions with memory version < before (0: no bound), newest first.
	ListWorkingMemoryRevisions(ctx context.Context, owner, sessionID string, before int64, limit int) ([]*carryon.WorkingMemoryRevision, error)
}

// Idempotency states.
const (
	IdemInFlight = "in_flight"
	IdemDone     = "done"
)

// IdempotencyRecord remembers a request id and the answer it got, per owner.
type IdempotencyRecord struct {
	OwnerID string
	Key     string
	// SessionID is the session the write belonged to, or empty; DeleteSession removes the
	// records of its session, so that a deleted session's answers are not replayed.
	SessionID string
	// Fingerprint identifies the request (operation, target and input); a repeat with another
	// fingerprint is refused.
	Fingerprint string
	State       string
	// Result is the stored answer (JSON) replayed to a repeat.
	Result    []byte
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Idempotency stores request ids.
type Idempotency interface {
	// GetIdempotency returns the owner's record for key. ENOTFOUND.
	GetIdempotency(ctx context.Context, owner, key string) (*IdempotencyRecord, error)
	// PutIdempotency inserts the record or replaces the owner's record with the same key.
	PutIdempotency(ctx context.Context, r *IdempotencyRecord) error
	// DeleteIdempotency removes the owner's record for key, if any.
	DeleteIdempotency(ctx context.Context, owner, key string) error
	// SweepIdempotency removes every record that expired before t and returns how many.
	SweepIdempotency(ctx context.Context, before time.Time) (int64, error)
	// HasExpiredIdempotency says whether a record expired before t, so that a sweeper writes only
	// when there is something to remove. It works in a Read transaction.
	HasExpiredIdempotency(ctx context.Context, before time.Time) (bool, error)
}

// Bundles is what exporting a session and importing it again need beyond the other aggregates'
// methods: the rows a session stores itself, deleted ones included, and its tombstones as given.
type Bundles interface {
	// OwnMessages returns up to limit (<= 0: all) of the message rows stored under s itself (a
	// fork's from its fork point on) with seq > after, oldest first, a message s deleted too:
	// Deleted set, its content, tool calls and metadata left out whether or not the row still
	// holds them for a fork. ENOTFOUND when s is not the owner's.
	OwnMessages(ctx context.Context, owner string, s *carryon.Session, after int64, limit int) ([]*carryon.Message, error)
	// InsertTombstones stores tombstones of the owner's session as given: Seq, Version (the
	// session version of the delete) and CreatedAt of each. ENOTFOUND when the session is not
	// the owner's; ECONFLICT when one exists.
	InsertTombstones(ctx context.Context, owner, sessionID string, ts []*carryon.Message) error
}
