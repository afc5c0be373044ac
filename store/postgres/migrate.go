package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/carryon-hub/carryon/internal/store/sqlq"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// migrationFS holds the schema's steps, NNNN_name.sql, applied in order. The numbering is shared
// with store/sqlite/migrations: from 0020 on a change to the schema has the same number and name on both
// drivers, the next number free on both (gaps allowed); TestMigrationsShareNumbers checks it.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// migrationLock is the advisory lock key every instance takes before it looks at or changes the
// schema, so that instances starting at once apply each migration exactly once.
const migrationLock int64 = 0x636172_72796f6e // "carryon"

func migrations() ([]sqlq.Migration, error) { return dialect.Migrations(migrationFS, "migrations") }

// LatestMigration is the schema version this build of the driver migrates to.
func LatestMigration() int {
	ms, _ := migrations() // none when the embedded files are bad, which Open reports
	return sqlq.Latest(ms)
}

// Migrate applies the embedded migrations the database does not have yet, in order, in one
// transaction that first takes a transaction advisory lock (pg_advisory_xact_lock) and then reads
// schema_migrations: several instances may call it at once and each migration is applied exactly
// once, and a migration that fails leaves the schema as it was. Running it again changes nothing.
// Open calls it.
func (db *DB) Migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	return db.lockedMigrationTx(ctx, "migrate", func(c conn) error {
		if err := c.ExecScript(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    BIGINT PRIMARY KEY,
			name       TEXT NOT NULL,
			applied_at BIGINT NOT NULL
		)`); err != nil {
			return err
		}
		if err := dialect.ApplyMigrations(ctx, c, ms, time.Now()); err != nil {
			return err
		}
		_, err := sqlq.NewTx(dialect, c, false).BackfillForkChains(ctx)
		return err
	})
}

// lockedMigrationTx runs fn in a transaction that holds the migration advisory lock.
func (db *DB) lockedMigrationTx(ctx context.Context, what string, fn func(conn) error) error {
	err := pgx.BeginFunc(ctx, db.pool, func(ptx pgx.Tx) error {
		if _, err := ptx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return err
		}
		return fn(conn{ptx})
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
