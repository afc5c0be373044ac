package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/storetest"
	"github.com/carryon-hub/carryon/store/sqlite"
)

func openFile(t testing.TB, path string, opts ...sqlite.Option) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path, opts...)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConformanceFile(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openFile(t, filepath.Join(t.TempDir(), "carryon.db"))
	})
}

func TestConformanceFileNormal(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openFile(t, filepath.Join(t.TempDir(), "carryon.db"), sqlite.WithSynchronous("NORMAL"))
	})
}

func TestConformanceLongTerm(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openFile(t, ":memory:") })
}

func TestOpenOptions(t *testing.T) {
	if _, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "x.db"), sqlite.WithSynchronous("sometimes")); err == nil {
		t.Fatal("Open accepted an unknown synchronous level")
	}
	if _, err := sqlite.Open(t.Context(), ""); err == nil {
		t.Fatal("Open accepted an empty dsn")
	}
	// A file that cannot be opened is named, with the reason.
	missing := filepath.Join(t.TempDir(), "gone", "x.db")
	if _, err := sqlite.Open(t.Context(), missing); err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("Open in a missing directory: %v", err)
	}
}

func TestMigrateIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "carryon.db")
	db := openFile(t, path)
	v, err := db.MigrationVersion(t.Context())
	if err != nil || v != sqlite.LatestMigration() || v == 0 {
		t.Fatalf("MigrationVersion = %d, %v; want %d", v, err, sqlite.LatestMigration())
	}
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate again: %v", err)
	}
	db.Close()
	db = openFile(t, path)
	if v2, err := db.MigrationVersion(t.Context()); err != nil || v2 != v {
		t.Fatalf("after reopen MigrationVersion = %d, %v; want %d", v2, err, v)
	}
}

// TestDurableAcrossReopen checks that committed data is in the file after Close.
func TestDurableAcrossReopen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "carryon.db")
	db := openFile(t, path)
	now := time.Now().UTC().Truncate(time.Microsecond)
	s := &carryon.Session{ID: "sess_1", OwnerID: "usr_1", Status: carryon.SessionActive, Version: 2,
		CreatedAt: now, UpdatedAt: now, LastActiveAt: now, ExpiresAt: now.Add(time.Hour), LastSeq: 1, MessageCount: 1}
	err := db.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertUser(ctx, &carryon.User{ID: "usr_1", Name: "alice", CreatedAt: now}); err != nil {
			return err
		}
		if err := tx.InsertSession(ctx, s); err != nil {
			return err
		}
		return tx.InsertMessages(ctx, "usr_1", []*carryon.Message{{SessionID: s.ID, Seq: 1, Role: carryon.RoleUser,
			Kind: carryon.KindMessage, Content: "remember me", Version: 2, CreatedAt: now}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openFile(t, path)
	err = db.Read(ctx, func(tx store.Tx) error {
		if _, err := tx.GetUser(ctx, "alice"); err != nil {
			return err
		}
		got, err := tx.GetSession(ctx, "usr_1", s.ID)
		if err != nil {
			return err
		}
		if !got.LastActiveAt.Equal(now) || got.Version != 2 {
			t.Errorf("session after reopen = %+v", got)
		}
		msgs, err := tx.LastMessages(ctx, "usr_1", got, 10)
		if err != nil {
			return err
		}
		if len(msgs) != 1 || msgs[0].Content != "remember me" || !msgs[0].CreatedAt.Equal(now) {
			t.Errorf("messages after reopen = %+v", msgs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTwoHandlesOneFile writes from two *DB handles on the same file (as two processes would) with
// many goroutines each: BEGIN IMMEDIATE and the busy timeout must keep SQLITE_BUSY from escaping,
// and no update may be lost.
func TestTwoHandlesOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "carryon.db")
	storetest.TwoHandles(t, openFile(t, path), openFile(t, path), 8, 25)
}

// TestReadDoesNotBlockWrite checks that on a file database a read transaction is deferred (WAL
// readers do not hold the write lock): a write commits while a read is open.
func TestReadDoesNotBlockWrite(t *testing.T) {
	ctx := t.Context()
	db := openFile(t, filepath.Join(t.TempDir(), "carryon.db"))
	err := db.Read(ctx, func(tx store.Tx) error {
		if _, err := tx.ListUsers(ctx); err != nil {
			return err
		}
		done := make(chan error, 1)
		go func() {
			done <- db.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				return tx.InsertUser(ctx, &carryon.User{ID: "usr_1", Name: "alice", CreatedAt: time.Now()})
			})
		}()
		select {
		case err := <-done:
			if err != nil {
				return err
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a write waited for an open read transaction")
		}
		users, err := tx.ListUsers(ctx)
		if err != nil || len(users) != 0 {
			t.Fatalf("the read saw %d users (%v) committed after its snapshot", len(users), err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSearchPlansAtScale checks the plan session search chooses against the collecting plan
// with enough documents (5,000) for the common word to reach the count from which it probes.
func TestSearchPlansAtScale(t *testing.T) {
	st := openFile(t, filepath.Join(t.TempDir(), "carryon.db"))
	storetest.CheckSearchPlans(t, st, storetest.PrefillSearch(t, st, 50, 100))
}
