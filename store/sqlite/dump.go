package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/sqlq"
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
	if err := s.tx.QueryRowContext(ctx, "SELECT count(*) FROM "+sqlq.QuoteIdent(table)).Scan(&n); err != nil {
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
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	q, ok := s.tables[i].read.Select(names)
	if !ok {
		return fmt.Errorf("sqlite: table %s has not all of the columns %v", t.Name, names)
	}
	rows, err := s.tx.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("sqlite: read %s: %w", t.Name, err)
	}
	defer rows.Close()
	out := store.Batcher{N: batch, Fn: fn}
	dest := make([]any, len(t.Columns))
	for rows.Next() {
		row := make([]any, len(t.Columns))
		for i := range row {
			dest[i] = &row[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("sqlite: read %s: %w", t.Name, err)
		}
		if err := out.Add(row); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: read %s: %w", t.Name, err)
	}
	return out.Flush()
}
