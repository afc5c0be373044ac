package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// copyTable is one table to copy: its columns in both databases and its place in the foreign-key
// order.
type copyTable struct {
	name    string
	columns []copyColumn
	// dropped are SQLite columns the PostgreSQL table lacks (their values are not copied).
	dropped []string
	// refs are the other tables this one references; they are copied first.
	refs []string
	// selfFrom and selfTo are the columns of a foreign key to the table itself (sessions.parent_id →
	// sessions.id), empty without one: rows are then read parents first.
	selfFrom, selfTo string
	// rowid is the column that is the table's INTEGER PRIMARY KEY (its rowid), if any.
	rowid string
	// pk are the columns of the table's primary key, in key order (they name a row in reports).
	pk []string
	// joins are the full-text tables read along (LEFT JOIN … ON rowid), for columns that SQLite
	// keeps in the index and PostgreSQL in the table.
	joins []string
}

// copyColumn is one copied column and how a SQLite value becomes a PostgreSQL one.
type copyColumn struct {
	name, sqliteType, pgType string
	// expr reads the value in the SELECT (t.name, or a column of a joined full-text table).
	expr    string
	convert func(v any) (any, error)
}

// shadowSuffixes end the names of the tables an FTS3/4/5 virtual table keeps its data in.
var shadowSuffixes = []string{"_data", "_idx", "_docsize", "_config", "_content", "_segments", "_segdir", "_stat"}

// copyPlan discovers the tables of the SQLite database, matches them with those of the PostgreSQL
// one, and returns them in foreign-key order (referenced tables first), with the SQLite tables it
// leaves out and why.
func copyPlan(ctx context.Context, stx *sql.Tx, ptx pgx.Tx) ([]*copyTable, []string, error) {
	rows, err := stx.QueryContext(ctx, `SELECT name, COALESCE(sql, '') FROM sqlite_master WHERE type = 'table' ORDER BY rowid`)
	if err != nil {
		return nil, nil, fmt.Errorf("sqlite: list tables: %w", err)
	}
	var names, virtual, skipped []string
	for rows.Next() {
		var name, ddl string
		if err := rows.Scan(&name, &ddl); err != nil {
			rows.Close()
			return nil, nil, err
		}
		if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(ddl)), "CREATE VIRTUAL TABLE") {
			virtual = append(virtual, name)
		}
		names = append(names, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("sqlite: list tables: %w", err)
	}
	pgCols, err := postgresColumns(ctx, ptx)
	if err != nil {
		return nil, nil, err
	}
	var tables []*copyTable
	for _, name := range names {
		switch {
		case name == "schema_migrations" || strings.HasPrefix(name, "sqlite_"):
			continue
		case slices.Contains(virtual, name):
			continue
		case isShadow(name, virtual):
			continue
		}
		cols, ok := pgCols[name]
		if !ok {
			return nil, nil, fmt.Errorf("table %s is in the SQLite database but not in PostgreSQL: are both at the same schema version?", name)
		}
		t, err := sqliteTable(ctx, stx, name, cols)
		if err != nil {
			return nil, nil, err
		}
		tables = append(tables, t)
	}
	for _, v := range virtual {
		note, err := linkIndex(ctx, stx, v, tables, pgCols)
		if err != nil {
			return nil, nil, err
		}
		skipped = append(skipped, v+" (a full-text index: "+note+")")
	}
	ordered, err := fkOrder(tables)
	return ordered, skipped, err
}

// linkIndex handles a virtual (full-text) table v of the table it indexes, named by its prefix
// (memories_fts indexes memories by rowid = memories.id). Where PostgreSQL keeps one of its
// columns in the indexed table instead (memories.doc, from which a generated tsvector column is
// computed), the column is read from the index; the rowid column itself, which PostgreSQL does
// not have, links the two and is not copied. It returns what became of the index.
func linkIndex(ctx context.Context, stx *sql.Tx, v string, tables []*copyTable, pg map[string]map[string]pgColumn) (string, error) {
	var t *copyTable
	for _, c := range tables {
		if strings.HasPrefix(v, c.name+"_") && c.rowid != "" && (t == nil || len(c.name) > len(t.name)) {
			t = c
		}
	}
	if t == nil {
		return "not copied; the destination keeps its own", nil
	}
	rows, err := stx.QueryContext(ctx, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, v)
	if err != nil {
		return "", fmt.Errorf("sqlite: columns of %s: %w", v, err)
	}
	defer rows.Close()
	alias := fmt.Sprintf("j%d", len(t.joins))
	var moved []string
	for rows.Next() {
		var col string
		if err := rows.Scan(&col); err != nil {
			return "", err
		}
		pc, ok := pg[t.name][col]
		if !ok || pc.generated || slices.ContainsFunc(t.columns, func(c copyColumn) bool { return c.name == col }) {
			continue
		}
		t.columns = append(t.columns, copyColumn{name: col, sqliteType: v + " column", pgType: pc.dataType,
			expr: alias + "." + quoteSQLite(col), convert: converter(pc.dataType)})
		moved = append(moved, t.name+"."+col)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("sqlite: columns of %s: %w", v, err)
	}
	if len(moved) == 0 {
		return "not copied; the destination keeps its own", nil
	}
	t.joins = append(t.joins, "LEFT JOIN "+quoteSQLite(v)+" "+alias+" ON "+alias+".rowid = t."+quoteSQLite(t.rowid))
	t.dropped = slices.DeleteFunc(t.dropped, func(c string) bool { return c == t.rowid })
	return "its text goes to " + strings.Join(moved, ", "), nil
}

// isShadow reports whether name is a table in which one of the virtual tables keeps its data.
func isShadow(name string, virtual []string) bool {
	for _, v := range virtual {
		if rest, ok := strings.CutPrefix(name, v); ok && slices.Contains(shadowSuffixes, rest) {
			return true
		}
	}
	return false
}

// pgColumn is a column of a PostgreSQL table.
type pgColumn struct {
	dataType  string
	generated bool
}

// postgresColumns returns the columns of every base table in the current schema, by table and
// column name.
func postgresColumns(ctx context.Context, ptx pgx.Tx) (map[string]map[string]pgColumn, error) {
	rows, err := ptx.Query(ctx, `SELECT c.table_name, c.column_name, c.data_type, c.is_generated
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

// sqliteTable reads a SQLite table's columns and foreign keys and pairs its columns with the
// PostgreSQL table's: the copied columns are those both have, except generated ones.
func sqliteTable(ctx context.Context, stx *sql.Tx, name string, pg map[string]pgColumn) (*copyTable, error) {
	t := &copyTable{name: name}
	rows, err := stx.QueryContext(ctx, `SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid`, name)
	if err != nil {
		return nil, fmt.Errorf("sqlite: columns of %s: %w", name, err)
	}
	var pk string
	pkCols := 0
	for rows.Next() {
		var col, typ string
		var pkPos int
		if err := rows.Scan(&col, &typ, &pkPos); err != nil {
			rows.Close()
			return nil, err
		}
		if pkPos > 0 {
			pkCols++
			for len(t.pk) < pkPos {
				t.pk = append(t.pk, "")
			}
			t.pk[pkPos-1] = col
		}
		if pkPos == 1 {
			pk = col
			if strings.EqualFold(typ, "INTEGER") {
				t.rowid = col
			}
		}
		pc, ok := pg[col]
		switch {
		case !ok:
			t.dropped = append(t.dropped, col)
		case pc.generated:
		default:
			t.columns = append(t.columns, copyColumn{name: col, sqliteType: typ, pgType: pc.dataType,
				expr: "t." + quoteSQLite(col), convert: converter(pc.dataType)})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: columns of %s: %w", name, err)
	}
	if pkCols != 1 {
		t.rowid = ""
	}
	rows, err = stx.QueryContext(ctx, `SELECT "table", "from", COALESCE("to", '') FROM pragma_foreign_key_list(?)`, name)
	if err != nil {
		return nil, fmt.Errorf("sqlite: foreign keys of %s: %w", name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var ref, from, to string
		if err := rows.Scan(&ref, &from, &to); err != nil {
			return nil, err
		}
		if ref != name {
			if !slices.Contains(t.refs, ref) {
				t.refs = append(t.refs, ref)
			}
			continue
		}
		if to == "" {
			to = pk
		}
		t.selfFrom, t.selfTo = from, to
	}
	return t, rows.Err()
}

// fkOrder sorts the tables so that every table comes after the tables it references, keeping
// the SQLite creation order where the foreign keys leave a choice.
func fkOrder(tables []*copyTable) ([]*copyTable, error) {
	byName := map[string]*copyTable{}
	for _, t := range tables {
		byName[t.name] = t
	}
	done := map[string]bool{}
	var out []*copyTable
	for len(out) < len(tables) {
		progress := false
		for _, t := range tables {
			if done[t.name] {
				continue
			}
			ready := true
			for _, r := range t.refs {
				if byName[r] != nil && !done[r] {
					ready = false
				}
			}
			if ready {
				done[t.name], progress = true, true
				out = append(out, t)
				break
			}
		}
		if !progress {
			var left []string
			for _, t := range tables {
				if !done[t.name] {
					left = append(left, t.name)
				}
			}
			return nil, fmt.Errorf("the foreign keys of tables %s form a cycle", strings.Join(left, ", "))
		}
	}
	return out, nil
}

// selectSQL is the query that reads a table's copied columns; a table that references itself is
// read parents first, by depth in its tree (a fork after the session it forks).
func (t *copyTable) selectSQL() string {
	cols := make([]string, len(t.columns))
	for i, c := range t.columns {
		cols[i] = c.expr
	}
	q := "SELECT " + strings.Join(cols, ", ") + " FROM " + quoteSQLite(t.name) + " t"
	for _, j := range t.joins {
		q += " " + j
	}
	if t.selfFrom == "" {
		return q
	}
	from, to, tbl := quoteSQLite(t.selfFrom), quoteSQLite(t.selfTo), quoteSQLite(t.name)
	return "WITH RECURSIVE depth(k, d) AS (SELECT " + to + ", 0 FROM " + tbl + " WHERE " + from + " IS NULL" +
		" UNION ALL SELECT c." + to + ", depth.d + 1 FROM " + tbl + " c JOIN depth ON c." + from + " = depth.k) " +
		q + " LEFT JOIN depth ON depth.k = t." + to + " ORDER BY COALESCE(depth.d, 9223372036854775807)"
}

// quoteSQLite quotes an identifier for SQLite.
func quoteSQLite(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
