package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgDatabase creates a fresh PostgreSQL database for the test on the server that
// CARRYON_TEST_POSTGRES_URL names, drops it when the test ends, and returns its URL. Without the
// variable the test is skipped.
func pgDatabase(t *testing.T) string {
	t.Helper()
	admin := os.Getenv("CARRYON_TEST_POSTGRES_URL")
	if admin == "" {
		t.Skip("set CARRYON_TEST_POSTGRES_URL to run the PostgreSQL tests (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)")
	}
	var b [6]byte
	rand.Read(b[:])
	name := "carryon_e2e_" + hex.EncodeToString(b[:])
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
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// cluster is several server processes over one PostgreSQL database, each with its own data
// directory; the first one's local admin key works on all of them (one database, one user).
type cluster struct {
	t    *testing.T
	dsn  string
	srvs []*server
	args [][]string
	env  []string
	key  string
}

// startCluster starts n instances; args[i] are extra flags of instance i.
func startCluster(t *testing.T, n int, env []string, args ...[]string) *cluster {
	t.Helper()
	c := &cluster{t: t, dsn: pgDatabase(t), env: env}
	for i := range n {
		var extra []string
		if i < len(args) {
			extra = args[i]
		}
		c.args = append(c.args, extra)
		c.srvs = append(c.srvs, c.start(i, t.TempDir()))
	}
	c.key = localKey(t, c.srvs[0].data)
	return c
}

func (c *cluster) start(i int, data string) *server {
	return startServerEnv(c.t, data, c.env, append([]string{"--db", c.dsn}, c.args[i]...)...)
}

// restart starts instance i again on its data directory after it was killed.
func (c *cluster) restart(i int) { c.srvs[i] = c.start(i, c.srvs[i].data) }
