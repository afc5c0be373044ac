package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/carryon-hub/carryon/internal/store"
)

var _ store.Loader = (*DB)(nil)

// Load calls fn with one transaction of its own (not Write's: it may last as long as the copy,
// so the idle-in-transaction limit of carryon's connections is lifted for it) and commits it
// when fn returns nil. Values are converted to the column types here (loadconvert.go).
func (db *DB) Load(ctx context.Context, fn func(store.LoadTx) error) error {
	ptx, err := db.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: begin: %w", err)
	}
	defer ptx.Rollback(context.WithoutCancel(ctx))
	if _, err := ptx.Exec(ctx, `SET LOCAL idle_in_transaction_session_timeout = 0`); err != nil {
		return fmt.Errorf("postgres: begin: %w", err)
	}
	l := &loadTx{tx: ptx}
	if l.cols, err = tableColumns(ctx, ptx); err != nil {
		return err
	}
	if err := fn(l); err != nil {
		return err
	}
	if err := ptx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: commit: %w", err)
	}
	return nil
}

// Analyze refreshes the planner's statistics of table.
func (db *DB) Analyze(ctx context.Context, table string) error {
	_, err := db.pool.Exec(ctx, "ANALYZE "+pgx.Identifier{table}.Sanitize())
	return err
}

// loadTx is a Load's transaction and the destination's columns.
type loadTx struct {
	tx   pgx.Tx
	cols map[string]map[string]pgColumn
}

// pgColumn is a column of a PostgreSQL table.
type pgColumn struct {
	dataType  string
	generated bool
}

// NonEmpty returns the first table by name with a row, schema_migrations aside.
func (l *loadTx) NonEmpty(ctx context.Context) (string, error) {
	names := make([]string, 0, len(l.cols))
	for name := range l.cols {
		if name != "schema_migrations" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		var has bool
		if err := l.tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+pgx.Identifier{name}.Sanitize()+")").Scan(&has); err != nil {
			return "", fmt.Errorf("postgres: %s: %w", name, err)
		}
		if has {
			return name, nil
		}
	}
	return "", nil
}

// Plan keeps the columns both sides have, except the generated ones PostgreSQL computes.
func (l *loadTx) Plan(src []store.Table) ([]store.Table, []string, error) {
	return store.PlanTables(src, "PostgreSQL", func(table, column string) (store.ColumnPlace, bool) {
		cols, ok := l.cols[table]
		pc, has := cols[column]
		switch {
		case !has:
			return store.Missing, ok
		case pc.generated:
			return store.Skip, ok
		}
		return store.Keep, ok
	})
}

// Check converts every value of row.
func (l *loadTx) Check(t store.Table, row []any, bad func(column string, err error)) {
	for i, c := range t.Columns {
		if _, err := converter(l.cols[t.Name][c.Name].dataType)(row[i]); err != nil {
			bad(c.Name, err)
		}
	}
}

// Insert converts rows and streams them in with COPY.
func (l *loadTx) Insert(ctx context.Context, t store.Table, rows [][]any) (int64, error) {
	names := make([]string, len(t.Columns))
	convs := make([]func(any) (any, error), len(t.Columns))
	for i, c := range t.Columns {
		pc := l.cols[t.Name][c.Name]
		names[i], convs[i] = c.Name, converter(pc.dataType)
	}
	// The values are converted in place: the batch is the caller's to overwrite (Snapshot.Rows).
	for _, row := range rows {
		for i, v := range row {
			x, err := convs[i](v)
			if err != nil {
				c := t.Columns[i]
				return 0, fmt.Errorf("column %s (%s to PostgreSQL %s): %w", c.Name, c.Type, l.cols[t.Name][c.Name].dataType, err)
			}
			row[i] = x
		}
	}
	n, err := l.tx.CopyFrom(ctx, pgx.Identifier{t.Name}, names, pgx.CopyFromRows(rows))
	if err != nil {
		return n, fmt.Errorf("postgres: %w", err)
	}
	return n, nil
}

// Finish makes the session search index from the loaded messages (no sequences to fix: ids are
// made by the application).
func (l *loadTx) Finish(ctx context.Context) (int64, error) { return RebuildSessionSearch(ctx, l.tx) }

// Count counts table's rows.
func (l *loadTx) Count(ctx context.Context, table string) (int64, error) {
	var n int64
	if err := l.tx.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{table}.Sanitize()).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: count %s: %w", table, err)
	}
	return n, nil
}

// tableColumns returns the columns of every base table in the current schema, by table and
// column name.
func tableColumns(ctx context.Context, tx pgx.Tx) (map[string]map[string]pgColumn, error) {
	rows, err := tx.Query(ctx, `SELECT c.table_name, c.column_name, c.data_type, c.is_generated
		FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list columns: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]pgColumn{}
	for rows.Next() {
		var table, col, typ, gen string
		if err := rows.Scan(&table, &col, &typ, &gen); err != nil {
			return nil, fmt.Errorf("postgres: list columns: %w", err)
		}
		if out[table] == nil {
			out[table] = map[string]pgColumn{}
		}
		out[table][col] = pgColumn{dataType: typ, generated: gen == "ALWAYS"}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list columns: %w", err)
	}
	return out, nil
}
