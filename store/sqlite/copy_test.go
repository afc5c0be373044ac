package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"

	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/storetest"
	"github.com/carryon-hub/carryon/store/postgres"
)

// openNew opens a new SQLite file.
func openNew(t *testing.T) store.Store { return openFile(t, filepath.Join(t.TempDir(), "carryon.db")) }

// TestCopySQLiteToSQLite: a SQLite store's dump loads into another, empty one, its full-text
// indexes made again.
func TestCopySQLiteToSQLite(t *testing.T) {
	t.Parallel()
	storetest.RunCopy(t, openNew, openNew)
}

// TestCopyFromPostgresRefused: a PostgreSQL store's rows check against an empty SQLite one,
// and a session, whose key PostgreSQL drew at random, is refused as SQLite cannot hold its key;
// inserting it anyway is the same error (skipped without CARRYON_TEST_POSTGRES_URL).
func TestCopyFromPostgresRefused(t *testing.T) {
	t.Parallel()
	src, err := postgres.Open(t.Context(), pgtest.NewSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	now := time.Now().UTC().Truncate(time.Microsecond)
	s := &carryon.Session{ID: "sess_pg", OwnerID: "usr_pg", Status: carryon.SessionActive, Version: 1, CreatedAt: now, UpdatedAt: now,
		LastActiveAt: now, ExpiresAt: now.Add(time.Hour), Metadata: []byte(`{}`)}
	err = src.Write(t.Context(), func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertUser(ctx, &carryon.User{ID: "usr_pg", Name: "pg", CreatedAt: now}); err != nil {
			return err
		}
		return tx.InsertSession(ctx, s)
	})
	if err != nil {
		t.Fatal(err)
	}
	dst := openNew(t).(store.Loader)
	var bad []string
	var insertErr error
	err = src.Dump(t.Context(), func(snap store.Snapshot) error {
		return dst.Load(t.Context(), func(load store.LoadTx) error {
			tables, _, err := load.Plan(snap.Tables())
			if err != nil {
				return err
			}
			for _, tb := range tables {
				if err := snap.Rows(t.Context(), tb, 10, func(rows [][]any) error {
					for _, row := range rows {
						load.Check(tb, row, func(column string, err error) { bad = append(bad, tb.Name+"."+column+": "+err.Error()) })
					}
					if tb.Name == "sessions" {
						_, insertErr = load.Insert(t.Context(), tb, rows)
					}
					return nil
				}); err != nil {
					return err
				}
			}
			return errors.New("rolled back")
		})
	})
	if err == nil || err.Error() != "rolled back" {
		t.Fatalf("dump and load: %v", err)
	}
	if len(bad) != 1 || !strings.Contains(bad[0], "sessions.session_key") || !strings.Contains(bad[0], "cannot be copied into SQLite") {
		t.Fatalf("problems = %q, want the session key's", bad)
	}
	if insertErr == nil || !strings.Contains(insertErr.Error(), "session key") {
		t.Fatalf("insert of the session: %v", insertErr)
	}
}

// TestMain drops the PostgreSQL schemas TestCopyFromPostgres makes.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
