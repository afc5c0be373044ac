package main

import (
	"context"
	"flag"
	"path/filepath"
	"strings"

	"github.com/carryon-hub/carryon/internal/app"
	"github.com/carryon-hub/carryon/internal/dbopen"
	"github.com/carryon-hub/carryon/internal/store"
)

// DefaultAddr is where the server listens unless told otherwise: loopback only.
const DefaultAddr = "127.0.0.1:8420"

// storeFlags are the flags that locate the database: the data directory and an optional DSN.
type storeFlags struct {
	data, db, synchronous string
	pgMaxConns            int
}

func (f *storeFlags) register(fs *flag.FlagSet, getenv env) {
	fs.StringVar(&f.data, "data", defaultDataDir(getenv), "data directory: the SQLite database, the local key file, workspaces")
	fs.StringVar(&f.db, "db", "", "database: a SQLite file path, or postgres://user@host:5432/db for PostgreSQL; default the SQLite file carryon.db in the data directory")
	fs.IntVar(&f.pgMaxConns, "pg-max-conns", 16, "PostgreSQL connection pool size per process")
	fs.StringVar(&f.synchronous, "sqlite-synchronous", "FULL", "SQLite durability: FULL survives power loss, NORMAL only process crashes")
}

// open makes the data directory and opens (and migrates) the database.
func (f *storeFlags) open(ctx context.Context) (store.Store, error) {
	dsn, err := f.dsn()
	if err != nil {
		return nil, err
	}
	return dbopen.Open(ctx, f.data, dsn, f.pgMaxConns, f.synchronous)
}

// dsn returns the database the flags name: --db, or the SQLite file carryon.db in the data
// directory. A --db with a scheme carryon does not know (mysql://…) is a usage error naming the
// scheme (only the scheme: the rest may hold a password).
func (f *storeFlags) dsn() (string, error) {
	if f.db == "" {
		return filepath.Join(f.data, "carryon.db"), nil
	}
	if scheme, _, ok := strings.Cut(f.db, "://"); ok && validScheme(scheme) {
		switch strings.ToLower(scheme) {
		case "postgres", "postgresql", "sqlite", "file":
		default:
			return "", usagef("--db: unknown database scheme %q; use a SQLite file path (or sqlite://PATH) or a postgres:// URL", scheme+"://")
		}
	}
	return f.db, nil
}

// validScheme reports whether s has the form of a URL scheme (RFC 3986: a letter, then letters,
// digits, "+", "-" or ".").
func validScheme(s string) bool {
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// defaultDataDir is the data directory of app.DefaultDataDir.
func defaultDataDir(getenv env) string { return app.DefaultDataDir(getenv) }

// isPostgres reports whether a DSN names a PostgreSQL database.
func isPostgres(dsn string) bool { return dbopen.IsPostgres(dsn) }
