package users

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// The key cache. Authenticating reads the key's row in a read transaction of its own, about an
// eighth of the CPU of an append over HTTP (docs/BENCHMARKS.md). A server keeps the users of the
// keys it saw for a short while, and drops them when a key is revoked or its user forgotten:
//
//   - in this process at once, after the change commits;
//   - in every process on one PostgreSQL at once, by a notification on KeysChannel sent after
//     the commit (a listener that lost its connection drops everything when it listens again);
//   - in every process on one SQLite file at once, by the key epoch file next to it, whose
//     modification time every change touches and a cached key's check reads (one stat);
//   - and in any case after KeyCacheTTL, should a process die between its commit and its
//     notification or touch.
//
// Only keys that authenticate are cached: an unknown key is looked up every time.

// KeysChannel is the notification channel on which a revoked key's id or a forgotten user's id
// is announced.
const KeysChannel = "carryon_keys"

// KeyCacheTTL is how long an authenticated key is trusted without reading it again.
const KeyCacheTTL = 5 * time.Second

// maxCachedKeys bounds the cache; past it the cache starts again empty.
const maxCachedKeys = 10000

// EpochFile is the name, in a SQLite deployment's data directory, of the file whose modification
// time moves whenever a key is revoked or a user forgotten.
const EpochFile = "keys.epoch"

type cachedKey struct {
	user  carryon.User
	keyID string
	at    time.Time
}

type keyCache struct {
	mu    sync.Mutex
	keys  map[string]cachedKey // by the key's hash
	epoch string               // the epoch file's state when the entries were made
	file  string               // the epoch file ("": none)
	// gen moves with every drop: a key read before a drop is not cached after it.
	gen uint64
}

// CacheKeys makes s keep authenticated keys for KeyCacheTTL (see above), with epochFile the
// SQLite deployment's epoch file ("" for PostgreSQL, which notifies instead), and returns s. A
// process that only changes keys (the CLI) does not cache: it only announces (AnnounceKeys).
func (s *Service) CacheKeys(epochFile string) *Service {
	s.cache = &keyCache{keys: map[string]cachedKey{}, file: epochFile}
	s.epochFile = epochFile
	return s
}

// AnnounceKeys makes s announce its key revocations and forgets to other processes through the
// epoch file epochFile (SQLite; "" for none) and the store's notifications (PostgreSQL), and
// returns s.
func (s *Service) AnnounceKeys(epochFile string) *Service {
	s.epochFile = epochFile
	return s
}

// DropCachedKeys forgets every cached key (a notification on KeysChannel, or a listener that
// listens again after a lost connection).
func (s *Service) DropCachedKeys() {
	if c := s.cache; c != nil {
		c.mu.Lock()
		clear(c.keys)
		c.gen++
		c.mu.Unlock()
	}
}

// epochOf is the state of the epoch file: its modification time and size ("" without one).
func epochOf(file string) string {
	if file == "" {
		return ""
	}
	st, err := os.Stat(file)
	if err != nil {
		return "none"
	}
	return strconv.FormatInt(st.ModTime().UnixNano(), 10) + "/" + strconv.FormatInt(st.Size(), 10)
}

// cached returns the user of the key with hash, when it is cached and still to be trusted, and
// else the ticket with which the key read now may be put.
func (c *keyCache) cached(hash string, now time.Time) (*carryon.User, uint64, bool) {
	e := epochOf(c.file)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e != c.epoch {
		clear(c.keys)
		c.epoch = e
		c.gen++
		return nil, c.gen, false
	}
	k, ok := c.keys[hash]
	if !ok || now.Sub(k.at) >= KeyCacheTTL || now.Before(k.at) {
		return nil, c.gen, false
	}
	u := k.user
	return &u, c.gen, true
}

// put caches the key with hash of user, read at now, unless something was dropped since its
// ticket was given (the key may be one of those).
func (c *keyCache) put(hash, keyID string, u *carryon.User, ticket uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ticket != c.gen {
		return
	}
	if len(c.keys) >= maxCachedKeys {
		clear(c.keys)
	}
	c.keys[hash] = cachedKey{user: *u, keyID: keyID, at: now}
}

// drop forgets the cached keys with id keyID or of user userID.
func (c *keyCache) drop(keyID, userID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for h, k := range c.keys {
		if k.keyID == keyID || k.user.ID == userID {
			delete(c.keys, h)
		}
	}
}

// announce tells every process that the key keyID was revoked or the user userID forgotten:
// this one's cache, the epoch file, the store's notification channel.
func (s *Service) announce(ctx context.Context, keyID, userID string) {
	if s.cache != nil {
		s.cache.drop(keyID, userID)
	}
	if s.epochFile != "" {
		now := time.Now()
		if err := os.Chtimes(s.epochFile, now, now); errors.Is(err, fs.ErrNotExist) {
			_ = os.WriteFile(s.epochFile, []byte("keys revoked or users forgotten: its time moves with each\n"), 0o600)
		}
	}
	if n, ok := store.AsNotifier(s.st); ok {
		id := keyID
		if id == "" {
			id = userID
		}
		_ = n.Notify(context.WithoutCancel(ctx), KeysChannel, id)
	}
}
