package users_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/users"
	"github.com/carryon-hub/carryon/store/sqlite"
)

func newService(t *testing.T) (*users.Service, store.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "carryon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return users.New(st, nil), st
}

func TestKeysAreHashedAndRevocable(t *testing.T) {
	t.Parallel()
	svc, st := newService(t)
	admin := carryon.NewTrustedContext(context.Background())
	u, secret, err := svc.CreateUser(admin, carryon.NewUser{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, users.KeyPrefix) || len(secret) < 40 {
		t.Fatalf("secret %q", secret)
	}
	got, err := svc.Authenticate(context.Background(), secret)
	if err != nil || got.ID != u.ID {
		t.Fatalf("authenticate: %v %v", got, err)
	}
	// Only the hash is stored.
	keys, _ := svc.ListKeys(admin, "alice")
	if len(keys) != 1 || keys[0].Hash != users.HashKey(secret) || strings.Contains(keys[0].Prefix, secret[10:]) {
		t.Fatalf("keys: %+v", keys)
	}
	var stored *carryon.APIKey
	st.Read(context.Background(), func(tx store.Tx) error {
		stored, _, err = tx.KeyByHash(context.Background(), users.HashKey(secret))
		return err
	})
	if stored == nil || stored.Hash == secret {
		t.Fatalf("stored key %+v", stored)
	}
	for _, bad := range []string{"", "ck_", "nope", secret + "x", strings.Repeat("ck_a", 100)} {
		if _, err := svc.Authenticate(context.Background(), bad); carryon.ErrorCode(err) != carryon.EUNAUTHORIZED {
			t.Errorf("authenticate %q: %v", bad, err)
		}
	}
	if err := svc.RevokeKey(admin, keys[0].ID, carryon.RetryOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Authenticate(context.Background(), secret); carryon.ErrorCode(err) != carryon.EUNAUTHORIZED {
		t.Fatalf("revoked key: %v", err)
	}
}

func TestOnlyAdminsManageUsers(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	admin := carryon.NewTrustedContext(context.Background())
	u, _, err := svc.CreateUser(admin, carryon.NewUser{Name: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	plain := carryon.NewContextWithUser(context.Background(), u)
	if _, _, err := svc.CreateUser(plain, carryon.NewUser{Name: "eve"}); carryon.ErrorCode(err) != carryon.EFORBIDDEN {
		t.Fatalf("plain user creates a user: %v", err)
	}
	if _, err := svc.ListUsers(context.Background()); carryon.ErrorCode(err) != carryon.EUNAUTHORIZED {
		t.Fatalf("anonymous list: %v", err)
	}
	if _, _, err := svc.CreateUser(admin, carryon.NewUser{Name: "bob"}); carryon.ErrorCode(err) != carryon.ECONFLICT {
		t.Fatalf("duplicate name: %v", err)
	}
	for _, name := range []string{"", "a b", "../x", strings.Repeat("x", 65), "-lead"} {
		if _, _, err := svc.CreateUser(admin, carryon.NewUser{Name: name}); carryon.ErrorCode(err) != carryon.EINVALID {
			t.Errorf("name %q: %v", name, err)
		}
	}
}

func TestLocalUserKeyFile(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	dir := t.TempDir()
	key, err := svc.EnsureLocalUser(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, users.LocalKeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	again, err := svc.EnsureLocalUser(context.Background(), dir)
	if err != nil || again != key {
		t.Fatalf("second start made a new key: %v", err)
	}
	u, err := svc.Authenticate(context.Background(), key)
	if err != nil || !u.Admin || u.Name != users.LocalUserName {
		t.Fatalf("local user: %+v %v", u, err)
	}
	// A key file whose key stopped working (revoked) is replaced with a new key.
	keys, _ := svc.ListKeys(carryon.NewTrustedContext(context.Background()), users.LocalUserName)
	svc.RevokeKey(carryon.NewTrustedContext(context.Background()), keys[0].ID, carryon.RetryOptions{})
	fresh, err := svc.EnsureLocalUser(context.Background(), dir)
	if err != nil || fresh == key {
		t.Fatalf("revoked local key not replaced: %v", err)
	}
	if read, _ := users.ReadLocalKey(dir); read != fresh {
		t.Fatalf("key file holds %q, want the new key", read)
	}
}
