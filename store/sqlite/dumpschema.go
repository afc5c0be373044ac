package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/sqlq"
)

// dumpTable is one table of a Dump: what it shows (store.Table) and how its columns are read
// (the full-text tables joined along, for the text SQLite keeps only in the index).
type dumpTable struct {
	store.Table
	read sqlq.DumpTable
	// rowid is the column that is the table's INTEGER PRIMARY KEY (its rowid), if any.
	rowid string
}

// shadowSuffixes end the names of the tables an FTS3/4/5 virtual table keeps its data in.
var shadowSuffixes = []string{"_data", "_idx", "_docsize", "_config", "_content", "_segments", "_segdir", "_stat"}

// plan discovers the tables of the database and puts them in foreign-key order (referenced
// tables first); the full-text indexes and their shadow tables are left out.
func (s *snapshot) plan(ctx context.Context) error {
	rows, err := s.tx.QueryContext(ctx, `SELECT name, COALESCE(sql, '') FROM sqlite_master WHERE type = 'table' ORDER BY rowid`)
	if err != nil {
		return fmt.Errorf("sqlite: list tables: %w", err)
	}
	var names, virtual []string
	for rows.Next() {
		var name, ddl string
		if err := rows.Scan(&name, &ddl); err != nil {
			rows.Close()
			return err
		}
		if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(ddl)), "CREATE VIRTUAL TABLE") {
			virtual = append(virtual, name)
		}
		names = append(names, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: list tables: %w", err)
	}
	var tables []*dumpTable
	for _, name := range names {
		if name == "schema_migrations" || strings.HasPrefix(name, "sqlite_") || slices.Contains(virtual, name) || isShadow(name, virtual) {
			continue
		}
		t, err := s.table(ctx, name)
		if err != nil {
			return err
		}
		tables = append(tables, t)
	}
	for _, v := range virtual {
		note, err := s.linkIndex(ctx, v, tables)
		if err != nil {
			return err
		}
		s.skipped = append(s.skipped, v+" (a full-text index: "+note+")")
	}
	s.tables, err = fkOrder(tables)
	return err
}

// linkIndex handles a virtual (full-text) table v of the table it indexes, named by its prefix
// (memories_fts indexes memories by rowid = memories.id): the index's columns the table lacks
// (memories_fts.doc) are read from the index as Incidental columns of the table, and so is the
// rowid that links the two. It returns what became of the index.
func (s *snapshot) linkIndex(ctx context.Context, v string, tables []*dumpTable) (string, error) {
	var t *dumpTable
	for _, c := range tables {
		if strings.HasPrefix(v, c.Name+"_") && c.rowid != "" && (t == nil || len(c.Name) > len(t.Name)) {
			t = c
		}
	}
	if t == nil {
		return "not copied; the destination keeps its own", nil
	}
	rows, err := s.tx.QueryContext(ctx, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, v)
	if err != nil {
		return "", fmt.Errorf("sqlite: columns of %s: %w", v, err)
	}
	defer rows.Close()
	alias := fmt.Sprintf("j%d", len(t.read.Joins))
	var moved []string
	for rows.Next() {
		var col string
		if err := rows.Scan(&col); err != nil {
			return "", err
		}
		if _, ok := t.read.Exprs[col]; ok {
			continue
		}
		t.Columns = append(t.Columns, store.Column{Name: col, Type: v + " column", Incidental: true})
		t.read.Exprs[col] = alias + "." + sqlq.QuoteIdent(col)
		moved = append(moved, t.Name+"."+col)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("sqlite: columns of %s: %w", v, err)
	}
	if len(moved) == 0 {
		return "not copied; the destination keeps its own", nil
	}
	t.read.Joins = append(t.read.Joins, "LEFT JOIN "+sqlq.QuoteIdent(v)+" "+alias+" ON "+alias+".rowid = t."+sqlq.QuoteIdent(t.rowid))
	for i := range t.Columns {
		if t.Columns[i].Name == t.rowid {
			t.Columns[i].Incidental = true
		}
	}
	return "its text goes along as " + strings.Join(moved, ", "), nil
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

// table reads a table's columns, primary key and foreign keys.
func (s *snapshot) table(ctx context.Context, name string) (*dumpTable, error) {
	t := &dumpTable{Table: store.Table{Name: name}, read: sqlq.DumpTable{Name: name, Exprs: map[string]string{}}}
	rows, err := s.tx.QueryContext(ctx, `SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid`, name)
	if err != nil {
		return nil, fmt.Errorf("sqlite: columns of %s: %w", name, err)
	}
	var pk string
	for rows.Next() {
		var col, typ string
		var pkPos int
		if err := rows.Scan(&col, &typ, &pkPos); err != nil {
			rows.Close()
			return nil, err
		}
		if pkPos > 0 {
			for len(t.Key) < pkPos {
				t.Key = append(t.Key, "")
			}
			t.Key[pkPos-1] = col
		}
		if pkPos == 1 {
			pk = col
			if strings.EqualFold(typ, "INTEGER") {
				t.rowid = col
			}
		}
		t.Columns = append(t.Columns, store.Column{Name: col, Type: typ})
		t.read.Exprs[col] = "t." + sqlq.QuoteIdent(col)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: columns of %s: %w", name, err)
	}
	if len(t.Key) != 1 {
		t.rowid = ""
	}
	t.read.Key = t.Key
	rows, err = s.tx.QueryContext(ctx, `SELECT "table", "from", COALESCE("to", '') FROM pragma_foreign_key_list(?)`, name)
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
			if !slices.Contains(t.Refs, ref) {
				t.Refs = append(t.Refs, ref)
			}
			continue
		}
		if to == "" {
			to = pk
		}
		t.read.SelfFrom, t.read.SelfTo = from, to
	}
	return t, rows.Err()
}

// fkOrder sorts the tables so that every table comes after the tables it references, keeping
// the creation order where the foreign keys leave a choice (store.OrderTables).
func fkOrder(tables []*dumpTable) ([]*dumpTable, error) {
	byName := map[string]*dumpTable{}
	plain := make([]store.Table, len(tables))
	for i, t := range tables {
		byName[t.Name], plain[i] = t, t.Table
	}
	ordered, err := store.OrderTables(plain)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	out := make([]*dumpTable, len(ordered))
	for i, t := range ordered {
		out[i] = byName[t.Name]
	}
	return out, nil
}
