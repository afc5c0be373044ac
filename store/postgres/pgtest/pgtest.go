// Package pgtest gives tests a fresh PostgreSQL database on the server that
// CARRYON_TEST_POSTGRES_URL names, and skips them with a clear message when it is unset. It is for
// tests only: the role in the URL must be allowed to create databases.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the variable that points the tests at a PostgreSQL server, e.g.
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const EnvURL = "CARRYON_TEST_POSTGRES_URL"

// ServerURL returns the test server's URL, or skips the test when none is set.
func ServerURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		t.Skip("set " + EnvURL + " to run the PostgreSQL tests (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)")
	}
	return u
}

// Enabled reports whether the PostgreSQL tests can run.
func Enabled() bool { return os.Getenv(EnvURL) != "" }

// NewDatabase creates an empty database with a unique name on the test server, drops it (closing
// any connection left) when the test ends, and returns its URL. It skips the test when no server
// is set.
func NewDatabase(t testing.TB) string {
	t.Helper()
	admin := ServerURL(t)
	var b [8]byte
	rand.Read(b[:])
	name := "carryon_test_" + hex.EncodeToString(b[:])
	exec := func(ctx context.Context, sql string) error {
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec(context.Background(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	if !strings.Contains(admin, "://") {
		return admin + " dbname=" + name
	}
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("%s: %v", EnvURL, err)
	}
	u.Path = "/" + name
	return u.String()
}
