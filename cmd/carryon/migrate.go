package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/carryon-hub/carryon/store/postgres"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// migrationVersioner is a store driver that tells which schema version its database is at; both
// drivers are.
type migrationVersioner interface {
	MigrationVersion(ctx context.Context) (int, error)
}

const migrateUsage = `usage: carryon migrate [--data DIR] [--db DSN]
  Bring the database's schema up to date (serve does it too) and say from which version to
  which; a database already at the latest version is left as it is.

Examples:
  carryon migrate
  carryon migrate --db postgres://carryon@db.internal:5432/carryon`

// runMigrate reads the schema version, opens the database (which applies every pending
// migration) and reports the version before and after.
func runMigrate(ctx context.Context, args []string, getenv env, stdout, stderr io.Writer) error {
	fs := newFlagSet("migrate", migrateUsage, stdout)
	var sf storeFlags
	sf.register(fs.FlagSet, getenv)
	if pos, err := fs.parse(getenv, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fs.misuse()
	}
	dsn, err := sf.dsn()
	if err != nil {
		return err
	}
	latest, kind := sqlite.LatestMigration(), "SQLite"
	if isPostgres(dsn) {
		latest, kind = postgres.LatestMigration(), "PostgreSQL"
	}
	before, err := schemaVersion(ctx, dsn)
	if err != nil {
		return err
	}
	st, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	after := latest
	if v, ok := st.(migrationVersioner); ok {
		if after, err = v.MigrationVersion(ctx); err != nil {
			return err
		}
	}
	if before == after {
		_, err = fmt.Fprintf(stdout, "%s database schema is up to date: version %d (this build knows %d)\n", kind, after, latest)
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s database schema migrated from version %d to %d (this build knows %d)\n", kind, before, after, latest)
	return err
}

// schemaVersion reads the highest applied migration without changing anything: 0 for a database
// that does not exist yet or was never migrated.
func schemaVersion(ctx context.Context, dsn string) (int, error) {
	if isPostgres(dsn) {
		return postgres.SchemaVersion(ctx, dsn)
	}
	return sqlite.SchemaVersion(ctx, strings.TrimPrefix(dsn, "sqlite://"))
}
