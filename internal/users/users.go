// Package users is the hub service for users and their API keys: it makes keys, stores only their
// SHA-256, authenticates requests by key and keeps the local user's key file for a server on its
// embedded defaults. It decides who may manage users (admins and trusted local operators) and
// knows nothing of HTTP.
package users

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/idempotency"
	"github.com/carryon-hub/carryon/internal/store"
)

// KeyPrefix starts every API key.
const KeyPrefix = "ck_"

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// Service implements carryon.UserService over a store.
type Service struct {
	st     store.Store
	now    func() time.Time
	keepID time.Duration
	forget Forgetter
	// cache keeps authenticated keys (CacheKeys); nil: every request reads its key.
	cache *keyCache
	// epochFile is touched by every key revocation and forget (AnnounceKeys, CacheKeys).
	epochFile string
}

// Forgetter finishes forgetting a user that ForgetUser marked: everything the user owns, then
// the user row (sessions.Service.Forget). by names who asked, for the audit log.
type Forgetter interface {
	Forget(ctx context.Context, userID, by string) (*carryon.ForgetReceipt, error)
}

// ForgetWith sets what finishes forgetting a user, and returns s. Without it ForgetUser answers
// EUNAVAILABLE.
func (s *Service) ForgetWith(f Forgetter) *Service {
	s.forget = f
	return s
}

var _ carryon.UserService = (*Service)(nil)

// New returns a user service over st; now is the clock (nil means time.Now).
func New(st store.Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{st: st, now: now, keepID: carryon.DefaultIdempotencyTTL}
}

// KeepRequestIDs sets how long request ids of key revocations and their answers are kept (the
// server's setting for every write; default carryon.DefaultIdempotencyTTL), and returns s.
func (s *Service) KeepRequestIDs(ttl time.Duration) *Service {
	if ttl > 0 {
		s.keepID = ttl
	}
	return s
}

func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// HashKey returns the stored form of a secret key: its SHA-256 in hex.
func HashKey(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Authenticate returns the user a secret key belongs to.
func (s *Service) Authenticate(ctx context.Context, secret string) (*carryon.User, error) {
	bad := carryon.Errorf(carryon.EUNAUTHORIZED, "the API key is not valid (unknown or revoked)")
	if !strings.HasPrefix(secret, KeyPrefix) || len(secret) > 128 {
		return nil, bad
	}
	hash := HashKey(secret)
	now := s.now()
	var ticket uint64
	if s.cache != nil {
		var u *carryon.User
		var ok bool
		if u, ticket, ok = s.cache.cached(hash, now); ok {
			return u, nil
		}
	}
	var u *carryon.User
	var k *carryon.APIKey
	// Seeing a key's creation before it is durable admits no one (its secret is not out before
	// the creation is acknowledged); seeing a revocation early refuses sooner.
	err := s.st.Read(store.WithReadAhead(ctx), func(tx store.Tx) error {
		var err error
		k, u, err = tx.KeyByHash(ctx, hash)
		return err
	})
	if carryon.ErrorCode(err) == carryon.ENOTFOUND {
		return nil, bad
	}
	if err == nil && s.cache != nil {
		s.cache.put(hash, k.ID, u, ticket, now)
	}
	return u, err
}

// CreateUser makes a user with a first key and returns the key's secret.
func (s *Service) CreateUser(ctx context.Context, in carryon.NewUser) (*carryon.User, string, error) {
	if err := admin(ctx); err != nil {
		return nil, "", err
	}
	if !validName.MatchString(in.Name) {
		return nil, "", carryon.Errorf(carryon.EINVALID, "user name %q must be 1 to 64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit", in.Name)
	}
	now := s.clock()
	u := &carryon.User{ID: carryon.NewID("usr_"), Name: in.Name, Admin: in.Admin, CreatedAt: now}
	k, secret := newKey(u.ID, now)
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertUser(ctx, u); err != nil {
			if carryon.ErrorCode(err) == carryon.ECONFLICT {
				return carryon.Errorf(carryon.ECONFLICT, "a user named %q exists already", in.Name)
			}
			return err
		}
		return tx.InsertKey(ctx, k)
	})
	if err != nil {
		return nil, "", err
	}
	return u, secret, nil
}

// ListUsers lists every user by name.
func (s *Service) ListUsers(ctx context.Context) ([]*carryon.User, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	var out []*carryon.User
	err := s.st.Read(ctx, func(tx store.Tx) error {
		var err error
		out, err = tx.ListUsers(ctx)
		return err
	})
	return out, err
}

// GetUser returns a user given by id or name, for an admin.
func (s *Service) GetUser(ctx context.Context, user string) (*carryon.User, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	var u *carryon.User
	err := s.st.Read(ctx, func(tx store.Tx) error {
		var err error
		u, err = tx.GetUser(ctx, user)
		return err
	})
	return u, err
}

// CreateKey makes another key for a user given by id or name.
func (s *Service) CreateKey(ctx context.Context, user string) (*carryon.APIKey, string, error) {
	if err := admin(ctx); err != nil {
		return nil, "", err
	}
	var k *carryon.APIKey
	var secret string
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		u, err := tx.GetUser(ctx, user)
		if err != nil {
			return err
		}
		k, secret = newKey(u.ID, s.clock())
		return tx.InsertKey(ctx, k)
	})
	if err != nil {
		return nil, "", err
	}
	return k, secret, nil
}

// ListKeys lists a user's keys (never their secrets).
func (s *Service) ListKeys(ctx context.Context, user string) ([]*carryon.APIKey, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	var out []*carryon.APIKey
	err := s.st.Read(ctx, func(tx store.Tx) error {
		u, err := tx.GetUser(ctx, user)
		if err != nil {
			return err
		}
		out, err = tx.ListKeys(ctx, u.ID)
		return err
	})
	return out, err
}

// RevokeKey revokes a key; requests with it are refused from then on. With a request id (kept
// per admin), a repeat succeeds again instead of finding the key revoked.
//
// Creating a user or a key takes no request id: its answer holds a secret that is shown once and
// never stored, so there is no answer to replay (a retried user creation finds the name taken).
func (s *Service) RevokeKey(ctx context.Context, keyID string, opt carryon.RetryOptions) error {
	if err := admin(ctx); err != nil {
		return err
	}
	now := s.clock()
	req := idempotency.Request{Owner: carryon.UserIDFromContext(ctx), ID: opt.RequestID, Op: "key.revoke", Target: keyID,
		Input: struct{}{}, Now: now, TTL: s.keepID}
	_, err := idempotency.Write(ctx, s.st, req, func(tx store.Tx) (struct{}, error) {
		return struct{}{}, tx.RevokeKey(ctx, keyID, now)
	})
	if err == nil {
		s.announce(ctx, keyID, "")
	}
	return err
}

// ForgetUser forgets a user given by id or name: the first transaction renames and hides the
// user and deletes its keys (from then on the user is a 404 and its keys a 401), then the
// Forgetter deletes the rest step by step. Given the id of a user whose forgetting was cut off (a
// crash, a restart), it continues it. The forget runs to its end even when ctx is cancelled (a
// client that went away): a half-forgotten user would only wait for the sweeper. An admin cannot
// forget itself (EINVALID): another admin must.
func (s *Service) ForgetUser(ctx context.Context, user string) (*carryon.ForgetReceipt, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	if s.forget == nil {
		return nil, carryon.Errorf(carryon.EUNAVAILABLE, "this server cannot forget users")
	}
	ctx = context.WithoutCancel(ctx)
	by := carryon.UserIDFromContext(ctx)
	if by == "" {
		by = "operator"
	}
	var id string
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		u, err := tx.GetUser(ctx, user)
		if carryon.ErrorCode(err) == carryon.ENOTFOUND {
			if _, ferr := tx.Forgetting(ctx, user); ferr == nil {
				id = user // marked already: continue
				return nil
			}
			return err
		} else if err != nil {
			return err
		}
		if u.ID == carryon.UserIDFromContext(ctx) {
			return carryon.Errorf(carryon.EINVALID, "an admin cannot forget itself; use another admin's key")
		}
		id = u.ID
		_, err = tx.MarkForgetting(ctx, u.ID, s.clock())
		return err
	})
	if err != nil {
		return nil, err
	}
	s.announce(ctx, "", id) // its keys are gone
	return s.forget.Forget(ctx, id, by)
}

func admin(ctx context.Context) error {
	if carryon.IsAdminContext(ctx) {
		return nil
	}
	if carryon.UserFromContext(ctx) == nil {
		return carryon.Errorf(carryon.EUNAUTHORIZED, "no authenticated user")
	}
	return carryon.Errorf(carryon.EFORBIDDEN, "only an admin may manage users and keys")
}

// newKey makes a key record and its secret: "ck_" and 32 random bytes in base32.
func newKey(userID string, now time.Time) (*carryon.APIKey, string) {
	secret := KeyPrefix + carryon.RandomToken(32)
	return &carryon.APIKey{
		ID: carryon.NewID("key_"), UserID: userID, Prefix: secret[:len(KeyPrefix)+6],
		Hash: HashKey(secret), CreatedAt: now,
	}, secret
}
