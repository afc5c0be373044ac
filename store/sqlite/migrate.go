package sqlite

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/carryon-hub/carryon/store/sqlq"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

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
			return nil, fmt.Errorf("sqlite: bad migration file name %q", e.Name())
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

// Migrate applies the embedded migrations the database does not have yet, in order, in one
// write transaction; running it again changes nothing. Open calls it.
func (db *DB) Migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	select {
	case db.writeSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-db.writeSem }()
	stx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: migrate: begin: %w", err)
	}
	defer stx.Rollback()
	if _, err := stx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at INTEGER NOT NULL
	)`); err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	var current int
	if err := stx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	for _, m := range ms {
		if m.version <= current {
			continue
		}
		if _, err := stx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", m.name, err)
		}
		if _, err := stx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.version, m.name, sqlq.Micros(time.Now())); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", m.name, err)
		}
	}
	if err := stx.Commit(); err != nil {
		return fmt.Errorf("sqlite: migrate: commit: %w", err)
	}
	return nil
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
