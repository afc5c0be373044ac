package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/store/postgres"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// TestMigrateReportsVersions: `carryon migrate` on a new database of either kind reports the
// version before and after, and a second run reports it up to date.
func TestMigrateReportsVersions(t *testing.T) {
	t.Parallel()
	sqlitePath := filepath.Join(t.TempDir(), "x.db")
	for _, tc := range []struct {
		kind, db string
		latest   int
	}{
		{"SQLite", sqlitePath, sqlite.LatestMigration()},
		{"SQLite", "sqlite://" + sqlitePath + "2", sqlite.LatestMigration()},
		{"PostgreSQL", "", postgres.LatestMigration()},
	} {
		t.Run(tc.kind+tc.db, func(t *testing.T) {
			if tc.db == "" {
				tc.db = pgDatabase(t)
			}
			for i, want := range []string{
				fmt.Sprintf("%s database schema migrated from version 0 to %d", tc.kind, tc.latest),
				fmt.Sprintf("%s database schema is up to date: version %d", tc.kind, tc.latest),
			} {
				var out bytes.Buffer
				if err := run(context.Background(), []string{"migrate", "--data", t.TempDir(), "--db", tc.db}, envMap(nil), nil, &out, &out); err != nil {
					t.Fatalf("migrate %d: %v\n%s", i, err, out.String())
				}
				if !strings.Contains(out.String(), want) {
					t.Fatalf("migrate %d: %q, want %q", i, out.String(), want)
				}
			}
		})
	}
}
