// Package dbopen opens the database a DSN names, with either driver: the server's --db flag and
// the commands that read a database directly. Linking it links both drivers; an embedder that
// opens its driver itself (package hub) links only that one.
package dbopen

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/store/postgres"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// DefaultPGMaxConns is the PostgreSQL pool size of the server's --pg-max-conns flag.
const DefaultPGMaxConns = 16

// Open makes the data directory and opens (and migrates) the database dsn names: a
// postgres:// URL, or a SQLite file path (sqlite://PATH too); an empty dsn is the SQLite file
// carryon.db in data. pgMaxConns sizes a PostgreSQL pool (zero: DefaultPGMaxConns); synchronous
// is SQLite's durability (FULL or NORMAL; empty: FULL); pgOpts are more options of a PostgreSQL
// database (a read replica), and an error for a SQLite one.
func Open(ctx context.Context, data, dsn string, pgMaxConns int, synchronous string, pgOpts ...postgres.Option) (store.Store, error) {
	if dsn == "" {
		dsn = filepath.Join(data, "carryon.db")
	}
	if err := os.MkdirAll(data, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	if IsPostgres(dsn) {
		if pgMaxConns <= 0 {
			pgMaxConns = DefaultPGMaxConns
		}
		return postgres.Open(ctx, dsn, append([]postgres.Option{postgres.WithMaxConns(int32(pgMaxConns))}, pgOpts...)...)
	}
	if len(pgOpts) > 0 {
		return nil, fmt.Errorf("a read replica needs a PostgreSQL database (--db postgres://…)")
	}
	if synchronous == "" {
		synchronous = "FULL"
	}
	return sqlite.Open(ctx, strings.TrimPrefix(dsn, "sqlite://"), sqlite.WithSynchronous(strings.ToUpper(synchronous)))
}

// IsPostgres reports whether a DSN names a PostgreSQL database.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}
