package postgres_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/storetest"
	"github.com/carryon-hub/carryon/store/postgres"
	"github.com/carryon-hub/carryon/store/sqlite"
	"github.com/jackc/pgx/v5"
)

// serverURL returns the test server's URL, or skips the test when none is set.
func serverURL(t testing.TB) string { return pgtest.ServerURL(t) }

// newSchema creates an empty schema on the test server and returns a dsn that uses it: much
// faster than a database per test.
func newSchema(t testing.TB) string { return pgtest.NewSchema(t) }

// open opens dsn and closes it when the test ends (before its database is dropped).
func open(t testing.TB, dsn string, opts ...postgres.Option) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), dsn, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	serverURL(t)
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, newSchema(t)) })
}

func TestOpenErrors(t *testing.T) {
	if _, err := postgres.Open(t.Context(), ""); err == nil {
		t.Fatal("Open accepted an empty dsn")
	}
	if _, err := postgres.Open(t.Context(), "postgres://%zz"); err == nil {
		t.Fatal("Open accepted a malformed dsn")
	}
	if _, err := postgres.Open(t.Context(), "postgres://x", postgres.WithRetries(-1)); err == nil {
		t.Fatal("Open accepted a negative retry count")
	}
}

// TestMigrate starts several instances on one fresh schema at once: the advisory lock lets
// exactly one apply each migration, and migrating again changes nothing.
func TestMigrate(t *testing.T) {
	dsn := newSchema(t)
	const instances = 6
	dbs := make([]*postgres.DB, instances)
	errs := make([]error, instances)
	var wg sync.WaitGroup
	for i := range dbs {
		wg.Go(func() { dbs[i], errs[i] = postgres.Open(t.Context(), dsn, postgres.WithMaxConns(2)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("instance %d: Open: %v", i, err)
		}
		t.Cleanup(func() { dbs[i].Close() })
	}
	db := dbs[0]
	v, err := db.MigrationVersion(t.Context())
	if err != nil || v != postgres.LatestMigration() || v == 0 {
		t.Fatalf("MigrationVersion = %d, %v; want %d", v, err, postgres.LatestMigration())
	}
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate again: %v", err)
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var rows, distinct int
	if err := conn.QueryRow(t.Context(), `SELECT count(*), count(DISTINCT version) FROM schema_migrations`).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	// One row per migration file: the numbers may have gaps (a number kept for another change).
	files, err := filepath.Glob(filepath.Join("migrations", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("migration files: %v, %v", files, err)
	}
	if rows != len(files) || distinct != rows {
		t.Fatalf("schema_migrations has %d rows (%d versions), want %d", rows, distinct, len(files))
	}
}

func TestWriteInsideRead(t *testing.T) {
	db := open(t, newSchema(t))
	err := db.Read(t.Context(), func(tx store.Tx) error {
		return tx.InsertUser(t.Context(), &carryon.User{ID: "usr_1", Name: "alice", CreatedAt: time.Now()})
	})
	if carryon.ErrorCode(err) != carryon.EINTERNAL {
		t.Fatalf("write inside Read = %v, want an internal error", err)
	}
}

// now is the tests' clock, at the store's microsecond precision.
var now = time.Now().UTC().Truncate(time.Microsecond)

// mkSession stores an active session of usr_1.
func mkSession(t testing.TB, db store.Store, id string) *carryon.Session {
	t.Helper()
	s := &carryon.Session{ID: id, OwnerID: "usr_1", Status: carryon.SessionActive, Version: 1,
		CreatedAt: now, UpdatedAt: now, LastActiveAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := db.Write(t.Context(), func(_ context.Context, tx store.Tx) error { return tx.InsertSession(t.Context(), s) }); err != nil {
		t.Fatal(err)
	}
	return s
}

// appendTurn appends one message to the session at its next seq and version, as the hub does.
func appendTurn(ctx context.Context, tx store.Tx, id, content string) error {
	_, err := storetest.AppendTurn(ctx, tx, "usr_1", id, content)
	return err
}

// checkSession fails unless the session is at version 1+n with n messages.
func checkSession(t *testing.T, db store.Store, id string, n int) {
	t.Helper()
	err := db.Read(t.Context(), func(tx store.Tx) error {
		got, err := tx.GetSession(t.Context(), "usr_1", id)
		if err != nil {
			return err
		}
		msgs, err := tx.MessagesAfter(t.Context(), "usr_1", got, 0, 0)
		if err != nil {
			return err
		}
		if got.Version != int64(1+n) || got.LastSeq != int64(n) || len(msgs) != n {
			t.Errorf("session %s at version %d, last seq %d, %d messages; want %d, %d, %d",
				id, got.Version, got.LastSeq, len(msgs), 1+n, n, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTextPostgresCannotStore checks that text PostgreSQL refuses (a NUL byte, invalid UTF-8) is
// the caller's EINVALID, not an internal error, and rolls the write back.
func TestTextPostgresCannotStore(t *testing.T) {
	db := open(t, newSchema(t))
	s := mkSession(t, db, "sess_1")
	for _, content := range []string{"nul \x00 byte", "bad \xff utf-8"} {
		err := db.Write(t.Context(), func(_ context.Context, tx store.Tx) error { return appendTurn(t.Context(), tx, s.ID, content) })
		if carryon.ErrorCode(err) != carryon.EINVALID {
			t.Fatalf("storing %q: %v, want %s", content, err, carryon.EINVALID)
		}
	}
	checkSession(t, db, s.ID, 0)
}

// TestCopyFromSQLite: a SQLite store's dump loads into an empty PostgreSQL store and reads back
// the same (what carryon copy does).
func TestCopyFromSQLite(t *testing.T) {
	t.Parallel()
	storetest.RunCopy(t, func(t *testing.T) store.Store {
		db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "carryon.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}, func(t *testing.T) store.Store { return open(t, newSchema(t)) })
}

// TestCopyPostgresToPostgres: a PostgreSQL store's dump loads into another, empty one.
func TestCopyPostgresToPostgres(t *testing.T) {
	t.Parallel()
	open := func(t *testing.T) store.Store { return open(t, newSchema(t)) }
	storetest.RunCopy(t, open, open)
}

// TestSearchPlansAtScale checks the plan session search chooses against the collecting plan
// after an ANALYZE, whose statistics put the common word in every document (so it probes).
func TestSearchPlansAtScale(t *testing.T) {
	dsn := newSchema(t)
	st := open(t, dsn)
	owner := storetest.PrefillSearch(t, st, 50, 100)
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	var share float64
	if err := conn.QueryRow(t.Context(), `SELECT e.freq FROM pg_stats s,
		unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e (elem, freq)
		WHERE s.schemaname = current_schema() AND s.tablename = 'session_search' AND e.elem = 'investigation'`).Scan(&share); err != nil || share < 0.9 {
		t.Fatalf("the statistics give the common word a share of %v (%v): the search would not probe", share, err)
	}
	storetest.CheckSearchPlans(t, st, owner)
}
