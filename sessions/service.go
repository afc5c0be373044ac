// Package sessions is the hub service that owns sessions and everything in them: messages, working
// memory, forks, expiry. It is the only place that decides whether a write is allowed (ownership,
// status, expiry, expected version) and it makes every write idempotent under a request id, with
// the id stored in the same transaction as the effect.
//
// It knows nothing of HTTP (package httpapi) nor of SQL (package store and its drivers).
package sessions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/store"
)

// Config holds the service's settings; zero values take the carryon defaults.
type Config struct {
	// Now is the clock; tests pass a fake one. Default time.Now.
	Now func() time.Time
	// IdleTTL is the default idle time after which a session expires.
	IdleTTL time.Duration
	// PurgeAfter is how long an expired session keeps its history before the sweeper deletes it.
	PurgeAfter time.Duration
	// IdempotencyTTL is how long request ids and their answers are kept.
	IdempotencyTTL time.Duration
}

// Service implements carryon.SessionService over a store.
type Service struct {
	st  store.Store
	cfg Config
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
	if cfg.IdempotencyTTL <= 0 {
		cfg.IdempotencyTTL = carryon.DefaultIdempotencyTTL
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

// Write runs fn in a write transaction under the write contract: with a request id, a repeat of
// the same request (same op, target and input) returns the stored answer and runs nothing; the
// answer is stored in the same transaction as the effect. input must not hold the request id.
// Other hub services (runs) use it to extend a session write in the same transaction.
func Write[T any](ctx context.Context, s *Service, op, target, requestID string, input any, fn WriteFunc[T]) (T, error) {
	var out T
	own, err := owner(ctx)
	if err != nil {
		return out, err
	}
	if err := validRequestID(requestID); err != nil {
		return out, err
	}
	fp, err := fingerprint(op, target, input)
	if err != nil {
		return out, err
	}
	now := s.now()
	replayed := false
	err = s.st.Write(ctx, func(tx store.Tx) error {
		out = *new(T)
		replayed = false
		if requestID != "" {
			rec, err := tx.GetIdempotency(ctx, own, requestID)
			switch {
			case err == nil && rec.ExpiresAt.After(now):
				if rec.Fingerprint != fp {
					return carryon.Errorf(carryon.EKEYREUSED, "request id %q was already used for a different request; use a new request id for a new request", requestID)
				}
				if rec.State == store.IdemInFlight {
					e := carryon.Errorf(carryon.EINFLIGHT, "request id %q is still being processed; retry later", requestID)
					e.RetryAfterSeconds = 1
					return e
				}
				replayed = true
				return json.Unmarshal(rec.Result, &out)
			case err != nil && carryon.ErrorCode(err) != carryon.ENOTFOUND:
				return err
			}
		}
		v, err := fn(tx, own, now)
		if err != nil {
			return err
		}
		out = v
		if requestID == "" {
			return nil
		}
		result, err := json.Marshal(out)
		if err != nil {
			return err
		}
		return tx.PutIdempotency(ctx, &store.IdempotencyRecord{
			OwnerID: own, Key: requestID, Fingerprint: fp, State: store.IdemDone, Result: result,
			CreatedAt: now, ExpiresAt: now.Add(s.cfg.IdempotencyTTL),
		})
	})
	if err != nil {
		return *new(T), err
	}
	if r := carryon.ReceiptFromContext(ctx); r != nil {
		r.Replayed = replayed
	}
	return out, nil
}

func validRequestID(id string) error {
	if len(id) > carryon.MaxRequestIDLength {
		return carryon.Errorf(carryon.EINVALID, "request_id is longer than %d bytes", carryon.MaxRequestIDLength)
	}
	if err := carryon.CheckText("request_id", id); err != nil {
		return err
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return carryon.Errorf(carryon.EINVALID, "request_id contains a control character")
		}
	}
	return nil
}

// fingerprint identifies a request by operation, target and input (JSON, which encoding/json
// writes deterministically: struct fields in order, map keys sorted).
func fingerprint(op, target string, input any) (string, error) {
	b, err := json.Marshal(input)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(op + "\x00" + target + "\x00"))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// LoadWritable returns the owner's session if a write to it is allowed now: not closed, not
// expired, at the expected version when one is given, and, for a runner's write, still the
// runner's run (fencing).
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
	case sess.Expired(now):
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
