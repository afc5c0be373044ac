package app_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/app"
	"github.com/carryon-hub/carryon/internal/dbopen"
	"github.com/carryon-hub/carryon/internal/pgtest"
)

// TestOpenDefaults: without Data the hub lives where "carryon serve" keeps its data
// ($XDG_DATA_HOME/carryon), in the SQLite file carryon.db; what one hub writes the next one
// opened on the same directory reads; Close may be called twice.
func TestOpenDefaults(t *testing.T) {
	t.Parallel()
	xdg := t.TempDir()
	getenv := func(k string) string {
		if k == "XDG_DATA_HOME" {
			return xdg
		}
		return ""
	}
	h, err := app.Open(t.Context(), app.Options{Getenv: getenv, NoWorkers: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(xdg, "carryon"); h.Data != want {
		t.Fatalf("Data = %q, want %q", h.Data, want)
	}
	if _, err := os.Stat(filepath.Join(xdg, "carryon", "carryon.db")); err != nil {
		t.Fatalf("the default database: %v", err)
	}
	if _, err := h.Agents.Agent(carryon.DefaultAgent); err != nil {
		t.Fatalf("the default profile: %v", err)
	}
	u, _, err := h.Users.CreateUser(carryon.NewTrustedContext(t.Context()), carryon.NewUser{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := h.Sessions.Create(carryon.NewContextWithUser(t.Context(), u), carryon.NewSession{Title: "kept"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}

	again, err := app.Open(t.Context(), app.Options{Data: filepath.Join(xdg, "carryon"), NoWorkers: true})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	view, err := again.Sessions.Get(carryon.NewContextWithUser(t.Context(), u), sess.ID, carryon.GetOptions{})
	if err != nil || view.Title != "kept" {
		t.Fatalf("the session after reopening: %+v, %v", view, err)
	}
}

// TestOpenPostgres: a postgres:// DSN opens (and migrates) PostgreSQL, and a run started there
// is executed by the hub's runners.
func TestOpenPostgres(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	data := t.TempDir()
	db, err := dbopen.Open(t.Context(), data, dsn, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	h, err := app.Open(t.Context(), app.Options{Data: data, Store: db})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	u, _, err := h.Users.CreateUser(carryon.NewTrustedContext(t.Context()), carryon.NewUser{Name: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	as := carryon.NewContextWithUser(t.Context(), u)
	sess, err := h.Sessions.Create(as, carryon.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	// Creates racing with one external id make one session, on a database whose writers are
	// not serialised (the unique index refuses the second row; the service answers the first).
	const n = 8
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := h.Sessions.Create(as, carryon.NewSession{ExternalID: "race"})
			if errs[i] = err; s != nil {
				ids[i] = s.ID
			}
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Fatalf("create %d with a shared external id = %s, %v; want %s", i, ids[i], errs[i], ids[0])
		}
	}
	run, err := h.Runs.Start(as, sess.ID, carryon.NewRun{Message: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	events, err := h.Runs.Events(as, run.ID, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	for {
		_, ok, err := events.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
	}
	if got, err := h.Runs.GetRun(as, run.ID); err != nil || got.Status != carryon.RunSucceeded {
		t.Fatalf("the run = %+v, %v; want succeeded", got, err)
	}
}

// TestOpenRefusesABadDatabase: a database that cannot be opened is an error, and no hub.
func TestOpenRefusesABadDatabase(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if h, err := app.Open(t.Context(), app.Options{Data: file}); err == nil {
		h.Close()
		t.Fatal("Open on a data directory that is a file succeeded")
	}
}
