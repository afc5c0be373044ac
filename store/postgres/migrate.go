package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/carryon-hub/carryon/store/sqlq"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrationLock is the advisory lock key every instance takes before it looks at or changes the
// schema, so that instances starting at once apply each migration exactly once.
const migrationLock int64 = 0x636172_72796f6e // "carryon"

// migration is one embedded schema change; files are named NNNN_name.sql and applied in order.
type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("postgres: bad migration file name %q", e.Name())
		}
		b, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// LatestMigration is the schema version this build of the driver migrates to.
func LatestMigration() int {
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// Migrate applies the embedded migrations the database does not have yet, in order, each in its
// own transaction that first takes a transaction advisory lock (pg_advisory_xact_lock) and then
// checks schema_migrations again: several instances may call it at once and each migration is
// applied exactly once. Running it again changes nothing. Open calls it.
func (db *DB) Migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	if err := db.lockedMigrationTx(ctx, "create schema_migrations", func(ptx pgx.Tx) error {
		_, err := ptx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    BIGINT PRIMARY KEY,
			name       TEXT NOT NULL,
			applied_at BIGINT NOT NULL
		)`)
		return err
	}); err != nil {
		return err
	}
	for _, m := range ms {
		err := db.lockedMigrationTx(ctx, "migration "+m.name, func(ptx pgx.Tx) error {
			var applied bool
			if err := ptx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)`,
				m.version).Scan(&applied); err != nil || applied {
				return err
			}
			if _, err := ptx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := ptx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.version, m.name, sqlq.Micros(time.Now()))
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// lockedMigrationTx runs fn in a transaction that holds the migration advisory lock.
func (db *DB) lockedMigrationTx(ctx context.Context, what string, fn func(pgx.Tx) error) error {
	err := pgx.BeginFunc(ctx, db.pool, func(ptx pgx.Tx) error {
		if _, err := ptx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return err
		}
		return fn(ptx)
	})
	if err != nil {
		return fmt.Errorf("postgres: %s: %w", what, err)
	}
	return nil
}

// MigrationVersion returns the highest migration applied to the database (0 for none, also when
// the database was never migrated).
func (db *DB) MigrationVersion(ctx context.Context) (int, error) {
	var v int
	err := db.pool.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: migration version: %w", err)
	}
	return v, nil
}
