package sqlite

import (
	"context"

	"github.com/carryon-hub/carryon/internal/store"
)

// TableStats lists the tables of sqlite_schema (the full-text index's shadow tables included,
// the virtual table itself not: it has no rows of its own) with their row counts and the pages
// the dbstat virtual table finds for each table and its indexes.
func (t *tx) TableStats(ctx context.Context) ([]store.TableStat, error) {
	names, err := t.strings(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
		AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	bytes := map[string]int64{}
	rows, err := t.Conn.Query(ctx, `SELECT coalesce(m.tbl_name, d.name), sum(d.pgsize) FROM dbstat d
		LEFT JOIN sqlite_schema m ON m.name = d.name GROUP BY 1`)
	if err != nil {
		return nil, t.Wrap(err, "table sizes")
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return nil, t.Wrap(err, "table sizes")
		}
		bytes[name] = n
	}
	if err := rows.Err(); err != nil {
		return nil, t.Wrap(err, "table sizes")
	}
	out := make([]store.TableStat, 0, len(names))
	for _, name := range names {
		n, err := t.CountRows(ctx, name)
		if err != nil {
			return nil, err
		}
		out = append(out, store.TableStat{Name: name, Rows: n, Bytes: bytes[name]})
	}
	return out, nil
}

// strings returns the one text column of every row of query.
func (t *tx) strings(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := t.Conn.Query(ctx, query, args...)
	if err != nil {
		return nil, t.Wrap(err, "list tables")
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, t.Wrap(err, "list tables")
		}
		out = append(out, s)
	}
	return out, t.Wrap(rows.Err(), "list tables")
}
