package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
)

// BackupTo writes a consistent copy of the database to path, which must not exist, while the
// database serves: VACUUM INTO copies what one read transaction sees (every write committed
// before it began, none after), compacted, and leaves writers alone. The copy is then checked
// (VerifyBackup) and its row counts returned.
func (db *DB) BackupTo(ctx context.Context, path string) (map[string]int64, error) {
	if db.inMemory {
		return nil, errors.New("sqlite: an in-memory database has nothing to back up")
	}
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("sqlite: backup: %s exists already", path)
	}
	if _, err := db.sql.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("sqlite: backup to %s: %w", path, err)
	}
	if db.ws != nil { // the copy may hold a commit whose fsync is still running (walsync.go)
		if err := db.ws.waitAll(); err != nil {
			return nil, err
		}
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, err
	}
	return VerifyBackup(ctx, path)
}

// VerifyBackup opens the SQLite file at path read-only, runs SQLite's integrity check and returns
// the row count of every carryon table (full-text index tables aside). A file that is no SQLite
// database, or whose check finds damage, is an error saying so.
func VerifyBackup(ctx context.Context, path string) (map[string]int64, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	sdb, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, err
	}
	defer sdb.Close()
	var check string
	if err := sdb.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil {
		return nil, fmt.Errorf("sqlite: %s is not a readable SQLite database: %w", path, err)
	}
	if check != "ok" {
		return nil, fmt.Errorf("sqlite: %s fails its integrity check: %s", path, check)
	}
	rows, err := sdb.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%_fts%' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, err
		}
		tables = append(tables, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if !slices.Contains(tables, "schema_migrations") {
		return nil, fmt.Errorf("sqlite: %s holds no carryon database", path)
	}
	counts := map[string]int64{}
	for _, t := range tables {
		var n int64
		if err := sdb.QueryRowContext(ctx, `SELECT count(*) FROM "`+strings.ReplaceAll(t, `"`, `""`)+`"`).Scan(&n); err != nil {
			return nil, err
		}
		counts[t] = n
	}
	return counts, nil
}
