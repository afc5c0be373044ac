package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/sqlq"
)

var _ store.Dumper = (*DB)(nil)

// derivedTables are the tables a dump leaves out because a Loader makes them from the others.
var derivedTables = map[string]string{
	"session_search": "the session search index: the destination makes its own from the messages",
}

// derivedColumns are the columns the driver writes from the others of their row (memories.doc,
// the search document of store.LongTermDocument): a dump marks them Incidental, and a
// destination that keeps them elsewhere makes them again.
var derivedColumns = map[string][]string{"memories": {"doc"}}

// Dump calls fn with one REPEATABLE READ, READ ONLY transaction of the current schema (one
// snapshot however long the dump takes). Generated columns (memories.tsv) are left out, as are
// the derived tables. Values come as pgx reads them, integers as int64.
func (db *DB) Dump(ctx context.Context, fn func(store.Snapshot) error) error {
	ptx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("postgres: begin read: %w", err)
	}
	defer ptx.Rollback(context.WithoutCancel(ctx))
	if _, err := ptx.Exec(ctx, `SET LOCAL idle_in_transaction_session_timeout = 0`); err != nil {
		return fmt.Errorf("postgres: begin read: %w", err)
	}
	s := &pgSnapshot{tx: ptx}
	if err := s.plan(ctx); err != nil {
		return err
	}
	return fn(s)
}

// pgSnapshot is a Dump's transaction and the tables it found.
type pgSnapshot struct {
	tx      pgx.Tx
	tables  []store.Table
	reads   map[string]*sqlq.DumpTable
	skipped []string
}

// plan lists the base tables in creation order with their columns, keys and foreign keys, and
// puts them in foreign-key order.
func (s *pgSnapshot) plan(ctx context.Context) error {
	rows, err := s.tx.Query(ctx, `SELECT c.oid, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind = 'r' ORDER BY c.oid`)
	if err != nil {
		return fmt.Errorf("postgres: list tables: %w", err)
	}
	type rel struct {
		oid  uint32
		name string
	}
	rels, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rel, error) {
		var x rel
		return x, r.Scan(&x.oid, &x.name)
	})
	if err != nil {
		return fmt.Errorf("postgres: list tables: %w", err)
	}
	s.reads = map[string]*sqlq.DumpTable{}
	var tables []store.Table
	for _, r := range rels {
		if r.name == "schema_migrations" {
			continue
		}
		if why, ok := derivedTables[r.name]; ok {
			s.skipped = append(s.skipped, r.name+" ("+why+")")
			continue
		}
		t, read, err := s.table(ctx, r.oid, r.name)
		if err != nil {
			return err
		}
		tables = append(tables, t)
		s.reads[r.name] = read
	}
	if s.tables, err = store.OrderTables(tables); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// table reads one table's columns (generated ones aside), primary key and foreign keys.
func (s *pgSnapshot) table(ctx context.Context, oid uint32, name string) (store.Table, *sqlq.DumpTable, error) {
	t := store.Table{Name: name}
	read := &sqlq.DumpTable{Name: name, Exprs: map[string]string{}}
	rows, err := s.tx.Query(ctx, `SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attgenerated <> ''
		FROM pg_attribute a WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, oid)
	if err != nil {
		return t, nil, fmt.Errorf("postgres: columns of %s: %w", name, err)
	}
	for rows.Next() {
		var col, typ string
		var generated bool
		if err := rows.Scan(&col, &typ, &generated); err != nil {
			rows.Close()
			return t, nil, fmt.Errorf("postgres: columns of %s: %w", name, err)
		}
		if !generated {
			t.Columns = append(t.Columns, store.Column{Name: col, Type: typ, Incidental: slices.Contains(derivedColumns[name], col)})
			read.Exprs[col] = "t." + sqlq.QuoteIdent(col)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return t, nil, fmt.Errorf("postgres: columns of %s: %w", name, err)
	}
	rows, err = s.tx.Query(ctx, `SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
		WHERE i.indrelid = $1 AND i.indisprimary ORDER BY array_position(i.indkey::int2[], a.attnum)`, oid)
	if err != nil {
		return t, nil, fmt.Errorf("postgres: key of %s: %w", name, err)
	}
	if t.Key, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return t, nil, fmt.Errorf("postgres: key of %s: %w", name, err)
	}
	read.Key = t.Key
	rows, err = s.tx.Query(ctx, `SELECT r.relname, a.attname, b.attname FROM pg_constraint c
		JOIN pg_class r ON r.oid = c.confrelid
		JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
		JOIN pg_attribute b ON b.attrelid = c.confrelid AND b.attnum = c.confkey[1]
		WHERE c.conrelid = $1 AND c.contype = 'f' ORDER BY c.conname`, oid)
	if err != nil {
		return t, nil, fmt.Errorf("postgres: foreign keys of %s: %w", name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var ref, from, to string
		if err := rows.Scan(&ref, &from, &to); err != nil {
			return t, nil, fmt.Errorf("postgres: foreign keys of %s: %w", name, err)
		}
		if ref == name {
			read.SelfFrom, read.SelfTo = from, to
		} else if !slices.Contains(t.Refs, ref) {
			t.Refs = append(t.Refs, ref)
		}
	}
	return t, read, rows.Err()
}

// Tables returns the tables in foreign-key order.
func (s *pgSnapshot) Tables() []store.Table { return s.tables }

// Skipped names the derived tables.
func (s *pgSnapshot) Skipped() []string { return s.skipped }

// Count counts the rows of table.
func (s *pgSnapshot) Count(ctx context.Context, table string) (int64, error) {
	var n int64
	if err := s.tx.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{table}.Sanitize()).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: count %s: %w", table, err)
	}
	return n, nil
}

// Rows streams t's rows in batches.
func (s *pgSnapshot) Rows(ctx context.Context, t store.Table, batch int, fn func([][]any) error) error {
	read, ok := s.reads[t.Name]
	if !ok {
		return fmt.Errorf("postgres: no table %s in the dump", t.Name)
	}
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	q, ok := read.Select(names)
	if !ok {
		return fmt.Errorf("postgres: table %s has not all of the columns %v", t.Name, names)
	}
	rows, err := s.tx.Query(ctx, q)
	if err != nil {
		return fmt.Errorf("postgres: read %s: %w", t.Name, err)
	}
	defer rows.Close()
	out := store.Batcher{N: batch, Fn: fn}
	for rows.Next() {
		row, err := rows.Values()
		if err != nil {
			return fmt.Errorf("postgres: read %s: %w", t.Name, err)
		}
		for i, v := range row {
			switch x := v.(type) {
			case int32:
				row[i] = int64(x)
			case int16:
				row[i] = int64(x)
			}
		}
		if err := out.Add(row); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: read %s: %w", t.Name, err)
	}
	return out.Flush()
}
