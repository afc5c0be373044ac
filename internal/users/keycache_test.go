package users_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/users"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// countingStore counts the read transactions of a store.
type countingStore struct {
	store.Store
	reads atomic.Int64
}

func (c *countingStore) Read(ctx context.Context, fn func(store.Tx) error) error {
	c.reads.Add(1)
	return c.Store.Read(ctx, fn)
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestKeyCache: a server's users service reads a key once and trusts it for KeyCacheTTL, and
// refuses it at once when it is revoked by this service, when another process (the CLI, on the
// same SQLite file) revokes it or forgets its user and touches the epoch file, and when the
// store notifies (DropCachedKeys); an unknown key is read every time.
func TestKeyCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	raw, err := sqlite.Open(context.Background(), filepath.Join(dir, "carryon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	st := &countingStore{Store: raw}
	clk := &clock{t: time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)}
	epoch := filepath.Join(dir, users.EpochFile)
	server := users.New(st, clk.now).CacheKeys(epoch)
	cli := users.New(raw, nil).AnnounceKeys(epoch).ForgetWith(forgetter{raw})
	admin := carryon.NewTrustedContext(context.Background())
	newKey := func(name string) (string, string) {
		_, secret, err := server.CreateUser(admin, carryon.NewUser{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		keys, _ := server.ListKeys(admin, name)
		return secret, keys[0].ID
	}
	authReads := func(secret string) (int64, error) {
		before := st.reads.Load()
		_, err := server.Authenticate(context.Background(), secret)
		return st.reads.Load() - before, err
	}
	wantOK := func(what, secret string, reads int64) {
		t.Helper()
		if n, err := authReads(secret); err != nil || n != reads {
			t.Fatalf("%s: %v after %d reads, want success after %d", what, err, n, reads)
		}
	}
	wantRefused := func(what, secret string) {
		t.Helper()
		if _, err := authReads(secret); carryon.ErrorCode(err) != carryon.EUNAUTHORIZED {
			t.Fatalf("%s: %v, want unauthorized", what, err)
		}
	}

	a, aID := newKey("alice")
	wantOK("first use", a, 1)
	wantOK("cached", a, 0)
	clk.add(users.KeyCacheTTL)
	wantOK("after the TTL it is read again", a, 1)
	wantOK("and cached again", a, 0)
	if err := server.RevokeKey(admin, aID, carryon.RetryOptions{}); err != nil {
		t.Fatal(err)
	}
	wantRefused("revoked by this service", a)

	b, bID := newKey("bob")
	wantOK("bob's first use", b, 1)
	wantOK("bob's cached", b, 0)
	if err := cli.RevokeKey(admin, bID, carryon.RetryOptions{}); err != nil {
		t.Fatal(err)
	}
	wantRefused("revoked by another process", b)

	c, _ := newKey("carol")
	wantOK("carol's first use", c, 1)
	if _, err := cli.ForgetUser(admin, "carol"); err != nil {
		t.Fatal(err)
	}
	wantRefused("forgotten by another process", c)

	d, _ := newKey("dave")
	wantOK("dave's first use", d, 1)
	wantOK("dave's cached", d, 0)
	server.DropCachedKeys()
	wantOK("after a notification it is read again", d, 1)

	for range 2 {
		if n, err := authReads("ck_unknown"); carryon.ErrorCode(err) != carryon.EUNAUTHORIZED || n != 1 {
			t.Fatalf("an unknown key: %v after %d reads, want unauthorized after 1", err, n)
		}
	}
}

// forgetter deletes a marked user's row, the last step of a forget, for a user who owns nothing.
type forgetter struct{ st store.Store }

func (f forgetter) Forget(ctx context.Context, userID, _ string) (*carryon.ForgetReceipt, error) {
	var r *carryon.ForgetReceipt
	err := f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		r, err = tx.DeleteForgottenUser(ctx, userID)
		return err
	})
	return r, err
}
