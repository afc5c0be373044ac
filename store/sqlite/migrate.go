package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"time"

	"github.com/carryon-hub/carryon/internal/store/sqlq"
)

// migrationFS holds the schema's steps, NNNN_name.sql, applied in order. The numbering is shared
// with store/postgres/migrations: from 0020 on a change to the schema has the same number and name on both
// drivers, the next number free on both (gaps allowed); TestMigrationsShareNumbers checks it.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

func migrations() ([]sqlq.Migration, error) { return dialect.Migrations(migrationFS, "migrations") }

// LatestMigration is the schema version this build of the driver migrates to.
func LatestMigration() int {
	ms, _ := migrations() // none when the embedded files are bad, which Open reports
	return sqlq.Latest(ms)
}

// Migrate applies the embedded migrations the database does not have yet, in order, in one
// write transaction; running it again changes nothing. Open calls it.
func (db *DB) Migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	return db.writeTx(ctx, func(stx *sql.Tx) error {
		c := conn{tx: stx}
		if err := c.ExecScript(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER PRIMARY KEY,
			name       TEXT NOT NULL,
			applied_at INTEGER NOT NULL
		)`); err != nil {
			return fmt.Errorf("sqlite: migrate: %w", err)
		}
		if err := dialect.ApplyMigrations(ctx, c, ms, time.Now()); err != nil {
			return err
		}
		_, err := sqlq.NewTx(dialect, c, false).BackfillForkChains(ctx)
		return err
	})
}

// MigrationVersion returns the highest migration applied to the database (0 for none).
func (db *DB) MigrationVersion(ctx context.Context) (int, error) {
	var v int
	err := db.sql.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("sqlite: migration version: %w", err)
	}
	return v, nil
}
