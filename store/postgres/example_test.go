package postgres_test

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/hub"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/store/postgres"
)

// databaseURL is what a program gets from its configuration, such as
// postgres://carryon@db.internal:5432/carryon. Here TestMain sets it to a fresh database on the
// test server.
var databaseURL string

// Example opens carryon on PostgreSQL, as every instance of a deployment does on one database:
// the driver migrates the schema on Open, and the hub takes it in place of its SQLite file.
func Example() {
	dir, err := os.MkdirTemp("", "carryon-postgres-example") // the workspaces' directory
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := postgres.Open(ctx, databaseURL, postgres.WithMaxConns(16))
	if err != nil {
		log.Fatal(err)
	}
	// The hub closes the store when it closes. NoWorkers serves the services without running
	// runs in this process: other instances' runners take them.
	h, err := hub.Open(ctx, hub.Options{Store: db, Data: dir, NoWorkers: true})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	alice, _, err := h.Users.CreateUser(carryon.NewTrustedContext(ctx), carryon.NewUser{Name: "alice"})
	if err != nil {
		log.Fatal(err)
	}
	as := carryon.NewContextWithUser(ctx, alice)
	s, err := h.Sessions.Create(as, carryon.NewSession{Title: "shared by every instance"})
	if err != nil {
		log.Fatal(err)
	}
	got, err := h.Sessions.Get(as, s.ID, carryon.GetOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Title, got.Version)
	// Output: shared by every instance 1
}

// TestMain gives Example a database of its own (and skips it without a test server), and drops
// the database of the tests' schemas when they are done.
func TestMain(m *testing.M) {
	admin := os.Getenv(pgtest.EnvURL)
	if admin == "" {
		flag.Set("test.skip", "^Example$") // as the tests skip: no server to run on
		os.Exit(pgtest.Main(m))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	dsn, drop, err := pgtest.CreateDatabase(ctx, admin)
	cancel()
	if err != nil {
		log.Fatal(err)
	}
	databaseURL = dsn
	code := pgtest.Main(m)
	if err := drop(); err != nil && code == 0 {
		log.Print(err)
		code = 1
	}
	os.Exit(code)
}
