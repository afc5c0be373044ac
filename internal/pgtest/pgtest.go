// Package pgtest gives tests a fresh PostgreSQL database or schema on the server that
// CARRYON_TEST_POSTGRES_URL names, and skips them with a clear message when it is unset. It is for
// tests only: the role in the URL must be allowed to create databases.
//
// NewDatabase makes a database per test: isolated from everything, and slow to make (a CREATE
// DATABASE takes seconds on a busy server). NewSchema makes a schema per test in one database of
// the test process, which costs milliseconds; the tests of a package that use it run that package
// through Main. A test process's database is its own, so tests of concurrent processes never share
// anything database-wide (advisory locks, LISTEN/NOTIFY channels).
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
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

// uniqueName returns a name no other test uses: carryon_test_ and 16 hex digits.
func uniqueName() string {
	var b [8]byte
	rand.Read(b[:])
	return "carryon_test_" + hex.EncodeToString(b[:])
}

// execAdmin runs one statement on its own connection to the database dsn names.
func execAdmin(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// withDatabase returns the server URL admin with the database name replaced, keeping its other
// parameters.
func withDatabase(admin, name string) (string, error) {
	if !strings.Contains(admin, "://") {
		return admin + " dbname=" + name, nil
	}
	u, err := url.Parse(admin)
	if err != nil {
		return "", fmt.Errorf("%s: %w", EnvURL, err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// withSearchPath returns dsn with every connection's search_path set to schema.
func withSearchPath(dsn, schema string) (string, error) {
	if !strings.Contains(dsn, "://") {
		return dsn + " search_path=" + schema, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("%s: %w", EnvURL, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// NewDatabase creates an empty database with a unique name on the test server, drops it (closing
// any connection left) when the test ends, and returns its URL. It skips the test when no server
// is set.
func NewDatabase(t testing.TB) string {
	t.Helper()
	dsn, drop, err := CreateDatabase(context.Background(), ServerURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Error(err)
		}
	})
	return dsn
}

// CreateDatabase creates an empty database with a unique name on the server admin names and
// returns its URL and the function that drops it (closing any connection left). It is
// NewDatabase for code without a test's T, such as a TestMain preparing an Example.
func CreateDatabase(ctx context.Context, admin string) (dsn string, drop func() error, err error) {
	name := uniqueName()
	if dsn, err = withDatabase(admin, name); err != nil {
		return "", nil, err
	}
	if err := execAdmin(ctx, admin, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("create test database: %w", err)
	}
	drop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := execAdmin(ctx, admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop test database %s: %w", name, err)
		}
		return nil
	}
	return dsn, drop, nil
}

// shared is the test process's database, in which NewSchema makes its schemas: created by the
// first NewSchema, dropped by Main when the tests are done.
var shared struct {
	mu      sync.Mutex
	running bool   // Main is running the tests
	admin   string // the server URL the database was created through
	name    string // the database, "" until the first NewSchema
	dsn     string
}

// Main runs the tests of a package whose tests call NewSchema and then drops the database their
// schemas live in; it returns the exit code. Call it from the package's TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
func Main(m *testing.M) int {
	shared.mu.Lock()
	shared.running = true
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.running = false
	if shared.name != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := execAdmin(ctx, shared.admin, "DROP DATABASE IF EXISTS "+shared.name+" WITH (FORCE)"); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: drop test database %s: %v\n", shared.name, err)
			if code == 0 {
				code = 1
			}
		}
		shared.name = ""
	}
	return code
}

// NewSchema creates an empty schema with a unique name in the test process's database and
// returns a URL whose connections use it (search_path), so that a store opened on it creates its
// tables there. The schema stays until Main drops the whole database. It skips the test when no
// server is set, and fails it when the package's TestMain does not run Main.
func NewSchema(t testing.TB) string {
	t.Helper()
	admin := ServerURL(t)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.running {
		t.Fatal("pgtest.NewSchema needs the package's TestMain to run pgtest.Main, which drops the schemas' database")
	}
	if shared.name == "" {
		name := uniqueName()
		if err := execAdmin(context.Background(), admin, "CREATE DATABASE "+name); err != nil {
			t.Fatalf("create test database: %v", err)
		}
		dsn, err := withDatabase(admin, name)
		if err != nil {
			t.Fatal(err)
		}
		shared.admin, shared.name, shared.dsn = admin, name, dsn
	}
	schema := uniqueName()
	if err := execAdmin(t.Context(), shared.dsn, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create test schema: %v", err)
	}
	dsn, err := withSearchPath(shared.dsn, schema)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}
