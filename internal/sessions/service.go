// Package sessions is the hub service that owns sessions and everything in them: messages, working
// memory, forks, expiry. It is the only place that decides whether a write is allowed (ownership,
// status, expiry, expected version) and it makes every write idempotent under a request id, with
// the id stored in the same transaction as the effect.
//
// It knows nothing of HTTP (package httpapi) nor of SQL (package store and its drivers).
package sessions

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/idempotency"
	"github.com/carryon-hub/carryon/internal/store"
)

// Config holds the service's settings; zero values take the carryon defaults.
type Config struct {
	// Now is the clock; tests pass a fake one. Default time.Now.
	Now func() time.Time
	// IdleTTL is the default idle time after which a session expires.
	IdleTTL time.Duration
	// PurgeAfter is how long an expired session keeps its history before the sweeper deletes it.
	PurgeAfter time.Duration
	// ClosedRetention is how long a closed session is kept after it was closed before the
	// sweeper deletes it; zero (the default) keeps closed sessions until they are deleted.
	ClosedRetention time.Duration
	// MaxSessionsPerUser, when positive, is the most sessions a user keeps: the sweeper deletes
	// the least recently active sessions beyond it, with everything in them. Zero (the default)
	// keeps every session.
	MaxSessionsPerUser int
	// IdempotencyTTL is how long request ids and their answers are kept.
	IdempotencyTTL time.Duration
	// MaxReadBytes bounds the bytes of messages one read (a page, a session's window) holds;
	// default carryon.DefaultMaxReadBytes.
	MaxReadBytes int64
	// Workspaces is the directory holding each session's workspace directory (named by the
	// session id, as the engine's): deleting or purging a session removes its workspace, and a
	// fork starts with a copy of its parent's. Empty: the service touches no files.
	Workspaces string
	// Agents names the agent profiles a session may be bound to; nil means only the default one.
	Agents carryon.AgentCatalog
	// Logger receives what cannot be returned, such as a workspace that could not be removed after
	// its session was deleted. Default slog.Default().
	Logger *slog.Logger
	// OnSweep, when set, is told the outcome of every sweep RunSweeper makes (for the metrics).
	OnSweep func(SweepResult, error)
}

// Service implements carryon.SessionService over a store.
type Service struct {
	st   store.Store
	cfg  Config
	runs RunEnder // ends a session's runs before a forget deletes it; nil: none
	// recall ranks the long-term memory of a context snapshot (RecallWith); nil: the
	// keyword search inside the snapshot's transaction.
	recall Recaller
}

// Recaller searches the caller's long-term memory for a context build: carryon.LongTermService's
// Search, for a server whose memory is searched by meaning too.
type Recaller interface {
	Search(ctx context.Context, in carryon.LongTermSearch) (*carryon.LongTermResults, error)
}

// RecallWith makes context snapshots rank long-term memory with r (hybrid search) after their
// transaction, instead of by keywords inside it, and returns s. Long-term memory is the user's,
// not the session's, so it needs no part of the session's snapshot.
func (s *Service) RecallWith(r Recaller) *Service {
	s.recall = r
	return s
}

var _ carryon.SessionService = (*Service)(nil)

// New returns a session service over st.
func New(st store.Store, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.IdleTTL <= 0 {
		cfg.IdleTTL = carryon.DefaultIdleTTL
	}
	if cfg.PurgeAfter <= 0 {
		cfg.PurgeAfter = carryon.DefaultPurgeAfter
	}
	if cfg.MaxReadBytes <= 0 {
		cfg.MaxReadBytes = carryon.DefaultMaxReadBytes
	}
	if cfg.IdempotencyTTL <= 0 {
		cfg.IdempotencyTTL = carryon.DefaultIdempotencyTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Service{st: st, cfg: cfg}
}

// now returns the clock's time in UTC at the stores' microsecond precision.
func (s *Service) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }

// owner returns the caller's user id, or EUNAUTHORIZED.
func owner(ctx context.Context) (string, error) {
	if id := carryon.UserIDFromContext(ctx); id != "" {
		return id, nil
	}
	return "", carryon.Errorf(carryon.EUNAUTHORIZED, "no authenticated user")
}

// read runs fn in a read transaction for the caller.
func (s *Service) read(ctx context.Context, fn func(tx store.Tx, owner string, now time.Time) error) error {
	own, err := owner(ctx)
	if err != nil {
		return err
	}
	now := s.now()
	return s.st.Read(ctx, func(tx store.Tx) error { return fn(tx, own, now) })
}

// WriteFunc is the effect of one write, run inside its transaction.
type WriteFunc[T any] func(tx store.Tx, owner string, now time.Time) (T, error)

// Write runs fn in a write transaction under the write contract (package idempotency): with a
// request id, a repeat of the same request (same op, target and input) returns the stored answer
// and runs nothing; the answer is stored in the same transaction as the effect. input must not
// hold the request id. Other hub services (runs) use it to extend a session write in the same
// transaction.
//
// fn's now is read once the transaction holds the write lock of the target session (SQLite: the
// database's, from BEGIN IMMEDIATE; PostgreSQL: the session row's, which this takes first), so
// the times of a session's writes follow the order in which they commit.
func Write[T any](ctx context.Context, s *Service, op, target, requestID string, input any, fn WriteFunc[T]) (T, error) {
	return write(ctx, s, op, target, requestID, input, nil, fn)
}

// write is Write with ref, when not nil, setting how the request id keeps the answer
// (idempotency.Request.Ref).
func write[T any](ctx context.Context, s *Service, op, target, requestID string, input any, ref func(*idempotency.Request), fn WriteFunc[T]) (T, error) {
	own, err := owner(ctx)
	if err != nil {
		return *new(T), err
	}
	req := s.request(own, op, target, requestID, input, s.now())
	if ref != nil {
		ref(&req)
	}
	return idempotency.Write(ctx, s.st, req, func(tx store.Tx) (T, error) {
		if strings.HasPrefix(target, carryon.SessionIDPrefix) {
			// Take the session's lock before the clock; a missing session is fn's to report.
			if err := tx.LockSession(ctx, own, target); err != nil {
				return *new(T), err
			}
		}
		return fn(tx, own, s.now())
	})
}

// SessionNamer is a write's answer that names the session the write belongs to, for answers that
// are no session, run or chat result of the root package (the short path's stored answer).
type SessionNamer interface {
	// WrittenSession is the id of the session the write belongs to.
	WrittenSession() string
}

// recordSession returns the session a write's request id belongs to, which forgets the id when it
// is deleted or purged: the session the answer is or names (a create's or a fork's new session, a
// run's or a chat's session), otherwise the target. A delete's own id belongs to no session: its
// answer holds nothing of the session, and a repeat of the delete is answered as the first one was.
func recordSession(op, target string, out any) string {
	switch v := out.(type) {
	case SessionNamer:
		return v.WrittenSession()
	case *carryon.Session:
		if v != nil {
			return v.ID
		}
	case *carryon.Run:
		if v != nil {
			return v.SessionID
		}
	case *carryon.ChatResult:
		if v != nil {
			return v.SessionID
		}
	}
	if op == "session.delete" {
		return ""
	}
	return target
}

// ReplaceAnswer stores out as the answer of an earlier Write with the same op, target, request id
// and input (see idempotency.Replace): for a write whose final answer is known only later.
func ReplaceAnswer(ctx context.Context, s *Service, op, target, requestID string, input, out any) error {
	own, err := owner(ctx)
	if err != nil || requestID == "" {
		return err
	}
	return idempotency.Replace(ctx, s.st, s.request(own, op, target, requestID, input, s.now()), out)
}

func (s *Service) request(own, op, target, requestID string, input any, now time.Time) idempotency.Request {
	return idempotency.Request{
		Owner: own, ID: requestID, Op: op, Target: target, Input: input, Now: now, TTL: s.cfg.IdempotencyTTL,
		Session: func(out any) string { return recordSession(op, target, out) },
	}
}

// LoadWritable returns the owner's session if a write to it is allowed now: not closed, not
// expired, at the expected version when one is given, and, for a runner's write, still the
// runner's run (fencing). A runner's write is not refused for expiry: its run holds the session
// (the runner's heartbeat keeps it alive), so a step longer than the idle TTL goes on.
func LoadWritable(ctx context.Context, tx store.Tx, owner, id string, expected *int64, fence *carryon.RunFence, now time.Time) (*carryon.Session, error) {
	sess, err := tx.GetSession(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	if err := checkFence(ctx, tx, owner, id, fence); err != nil {
		return nil, err
	}
	if err := checkVersion(sess, expected); err != nil {
		return nil, err
	}
	switch {
	case sess.Status == carryon.SessionClosed:
		return nil, carryon.Errorf(carryon.ECLOSED, "session %s is closed; restore it to write again", id)
	case sess.Expired(now) && fence == nil: // a running run keeps its session alive
		return nil, carryon.Errorf(carryon.EEXPIRED, "session %s expired at %s after being idle; restore it to write again", id, sess.ExpiresAt.Format(time.RFC3339))
	}
	return sess, nil
}

// checkVersion refuses a write whose expected version is not the session's. A version below 1
// is no version a session ever had (they start at 1): that is a malformed request (EINVALID),
// not a conflict.
func checkVersion(sess *carryon.Session, expected *int64) error {
	if expected != nil && *expected < 1 {
		return carryon.Errorf(carryon.EINVALID, "expected_version must be a session version, 1 or more, not %d", *expected)
	}
	if expected != nil && *expected != sess.Version {
		return carryon.VersionConflict(*expected, sess.Version)
	}
	return nil
}

// Touch records a write at now: the version goes up and the idle clock restarts. It stores the
// session conditionally on the version it was read at.
func Touch(ctx context.Context, tx store.Tx, sess *carryon.Session, now time.Time) error {
	prev := sess.Version
	sess.Version++
	sess.UpdatedAt = now
	sess.LastActiveAt = now
	sess.ExpiresAt = now.Add(time.Duration(sess.IdleTTLSeconds) * time.Second)
	return tx.UpdateSession(ctx, sess, prev)
}

// fenceRun returns the run id of a fence, or "".
func fenceRun(f *carryon.RunFence) string {
	if f == nil {
		return ""
	}
	return f.RunID
}
