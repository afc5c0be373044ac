package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/carryon-hub/carryon/internal/store"
)

var _ store.Dumper = (*DB)(nil)

// Dump calls fn with one read transaction of the whole database (dumpschema.go finds its
// tables). Values come as SQLite keeps them: nil, int64, float64, string or []byte, times as
// INTEGER microseconds and booleans as INTEGER 0/1.
func (db *DB) Dump(ctx context.Context, fn func(store.Snapshot) error) error {
	stx, err := db.sql.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("sqlite: begin read: %w", err)
	}
	defer stx.Rollback()
	s := &snapshot{tx: stx}
	if err := s.plan(ctx); err != nil {
		return err
	}
	return fn(s)
}

// snapshot is a Dump's read transaction and the tables it found.
type snapshot struct {
	tx      *sql.Tx
	tables  []*dumpTable
	skipped []string
}

// Tables returns the tables in foreign-key order.
func (s *snapshot) Tables() []store.Table {
	out := make([]store.Table, len(s.tables))
	for i, t := range s.tables {
		out[i] = t.Table
	}
	return out
}

// Skipped names the full-text indexes, which are not dumped.
func (s *snapshot) Skipped() []string { return s.skipped }

// Count counts the rows of table.
func (s *snapshot) Count(ctx context.Context, table string) (int64, error) {
	var n int64
	if err := s.tx.QueryRowContext(ctx, "SELECT count(*) FROM "+quoteIdent(table)).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: count %s: %w", table, err)
	}
	return n, nil
}

// Rows streams t's rows in batches.
func (s *snapshot) Rows(ctx context.Context, t store.Table, batch int, fn func([][]any) error) error {
	i := slices.IndexFunc(s.tables, func(d *dumpTable) bool { return d.Name == t.Name })
	if i < 0 {
		return fmt.Errorf("sqlite: no table %s in the dump", t.Name)
	}
	q, err := s.tables[i].selectSQL(t.Columns)
	if err != nil {
		return err
	}
	rows, err := s.tx.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("sqlite: read %s: %w", t.Name, err)
	}
	defer rows.Close()
	batch = max(batch, 1)
	buf := make([][]any, 0, batch)
	dest := make([]any, len(t.Columns))
	for rows.Next() {
		row := make([]any, len(t.Columns))
		for i := range row {
			dest[i] = &row[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("sqlite: read %s: %w", t.Name, err)
		}
		if buf = append(buf, row); len(buf) == batch {
			if err := fn(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: read %s: %w", t.Name, err)
	}
	if len(buf) > 0 {
		return fn(buf)
	}
	return nil
}

// selectSQL is the query that reads cols of the table; a table that references itself is read
// parents first, by depth in its tree (a fork after the session it forks).
func (t *dumpTable) selectSQL(cols []store.Column) (string, error) {
	exprs := make([]string, len(cols))
	for i, c := range cols {
		e, ok := t.exprs[c.Name]
		if !ok {
			return "", fmt.Errorf("sqlite: table %s has no column %s", t.Name, c.Name)
		}
		exprs[i] = e
	}
	q := "SELECT " + strings.Join(exprs, ", ") + " FROM " + quoteIdent(t.Name) + " t"
	for _, j := range t.joins {
		q += " " + j
	}
	if t.selfFrom == "" {
		return q + t.orderBy("t."), nil
	}
	from, to, tbl := quoteIdent(t.selfFrom), quoteIdent(t.selfTo), quoteIdent(t.Name)
	return "WITH RECURSIVE depth(k, d) AS (SELECT " + to + ", 0 FROM " + tbl + " WHERE " + from + " IS NULL" +
		" UNION ALL SELECT c." + to + ", depth.d + 1 FROM " + tbl + " c JOIN depth ON c." + from + " = depth.k) " +
		q + " LEFT JOIN depth ON depth.k = t." + to + " ORDER BY COALESCE(depth.d, 9223372036854775807)" +
		strings.Replace(t.orderBy("t."), " ORDER BY", ",", 1), nil
}

// orderBy orders by the primary key (empty for a table without one).
func (t *dumpTable) orderBy(prefix string) string {
	if len(t.Key) == 0 {
		return ""
	}
	keys := make([]string, len(t.Key))
	for i, k := range t.Key {
		keys[i] = prefix + quoteIdent(k)
	}
	return " ORDER BY " + strings.Join(keys, ", ")
}

// quoteIdent quotes an identifier for SQLite.
func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
