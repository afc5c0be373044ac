package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/sqlq"
)

var _ store.Loader = (*DB)(nil)

// Load calls fn with one write transaction (BEGIN IMMEDIATE, between the batches of Write) and
// commits it when fn returns nil. Values are converted to the columns' declared types
// (loadValue): booleans to INTEGER 0/1, times to INTEGER microseconds, text and bytes as the
// column is declared.
func (db *DB) Load(ctx context.Context, fn func(store.LoadTx) error) error {
	return db.writeTx(ctx, func(stx *sql.Tx) error {
		l := &loadTx{tx: stx, snapshot: snapshot{tx: stx}}
		if err := l.plan(ctx); err != nil {
			return err
		}
		return fn(l)
	})
}

// Analyze does nothing: SQLite's planner keeps no statistics carryon relies on, and ANALYZE
// would change the plans of every query.
func (db *DB) Analyze(context.Context, string) error { return nil }

// loadTx is a Load's transaction; it reads the destination's tables, and counts their rows, as
// a dump does (snapshot).
type loadTx struct {
	tx *sql.Tx
	snapshot
}

// NonEmpty returns the first table by name with a row (full-text indexes, which hold their
// configuration, aside).
func (l *loadTx) NonEmpty(ctx context.Context) (string, error) {
	names := make([]string, 0, len(l.tables))
	for _, t := range l.tables {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	for _, name := range names {
		var has bool
		if err := l.tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM "+sqlq.QuoteIdent(name)+")").Scan(&has); err != nil {
			return "", fmt.Errorf("sqlite: %s: %w", name, err)
		}
		if has {
			return name, nil
		}
	}
	return "", nil
}

// Plan keeps the columns both sides have; what SQLite keeps in a full-text index (memories'
// search document) is made again by Finish.
func (l *loadTx) Plan(src []store.Table) ([]store.Table, []string, error) {
	return store.PlanTables(src, "SQLite", func(table, column string) (store.ColumnPlace, bool) {
		dst := l.table(table)
		if dst == nil {
			return store.Missing, false
		}
		switch expr, has := dst.read.Exprs[column]; {
		case !has:
			return store.Missing, true
		case !strings.HasPrefix(expr, "t."):
			return store.Skip, true
		}
		return store.Keep, true
	})
}

// table returns the destination's table called name, nil when there is none.
func (l *loadTx) table(name string) *dumpTable {
	for _, t := range l.tables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Check converts every value of row.
func (l *loadTx) Check(t store.Table, row []any, bad func(column string, err error)) {
	dst := l.table(t.Name)
	for i, c := range t.Columns {
		if _, err := loadValue(dst.columnType(c.Name), row[i]); err != nil {
			bad(c.Name, err)
		} else if err := checkSessionKey(t.Name, c.Name, row[i]); err != nil {
			bad(c.Name, err)
		}
	}
}

// maxSessionKey bounds the session keys SQLite can take: its session search documents are
// rowid = session_key * 2^32 + seq, in 63 bits.
const maxSessionKey = 1<<31 - 1

// checkSessionKey refuses a session key SQLite's session search cannot hold: PostgreSQL's are
// random in 63 bits, and a copy does not renumber them.
func checkSessionKey(table, column string, v any) error {
	if k, ok := v.(int64); ok && table == "sessions" && column == "session_key" && (k < 0 || k > maxSessionKey) {
		return fmt.Errorf("session key %d is above SQLite's %d (PostgreSQL's keys are random; a copy does not renumber them, so PostgreSQL cannot be copied into SQLite)", k, maxSessionKey)
	}
	return nil
}

// Insert converts and inserts rows with one prepared statement.
func (l *loadTx) Insert(ctx context.Context, t store.Table, rows [][]any) (int64, error) {
	dst := l.table(t.Name)
	names := make([]string, len(t.Columns))
	marks := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i], marks[i] = sqlq.QuoteIdent(c.Name), "?"
	}
	stmt, err := l.tx.PrepareContext(ctx, "INSERT INTO "+sqlq.QuoteIdent(t.Name)+" ("+strings.Join(names, ", ")+") VALUES ("+strings.Join(marks, ", ")+")")
	if err != nil {
		return 0, fmt.Errorf("sqlite: insert into %s: %w", t.Name, err)
	}
	defer stmt.Close()
	var n int64
	args := make([]any, len(t.Columns))
	for _, row := range rows {
		for i, c := range t.Columns {
			if err := checkSessionKey(t.Name, c.Name, row[i]); err != nil {
				return n, err
			}
			if args[i], err = loadValue(dst.columnType(c.Name), row[i]); err != nil {
				return n, fmt.Errorf("column %s (%s to SQLite %s): %w", c.Name, c.Type, dst.columnType(c.Name), err)
			}
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return n, fmt.Errorf("sqlite: insert into %s: %w", t.Name, err)
		}
		n++
	}
	return n, nil
}

// Finish makes the full-text indexes from the loaded rows: memories_fts from memories (the
// document PutLongTermItem writes), session_search from the messages (as migration 0025 does),
// and returns how many session search documents there are.
func (l *loadTx) Finish(ctx context.Context) (int64, error) {
	if err := l.indexMemories(ctx); err != nil {
		return 0, err
	}
	if _, err := l.tx.ExecContext(ctx, `DELETE FROM session_search`); err != nil {
		return 0, fmt.Errorf("sqlite: empty the session search index: %w", err)
	}
	res, err := l.tx.ExecContext(ctx, rebuildSessionSearch)
	if err != nil {
		return 0, fmt.Errorf("sqlite: rebuild the session search index: %w", err)
	}
	return res.RowsAffected()
}

// indexMemories writes every memory's search document anew.
func (l *loadTx) indexMemories(ctx context.Context) error {
	if _, err := l.tx.ExecContext(ctx, `DELETE FROM memories_fts`); err != nil {
		return fmt.Errorf("sqlite: empty the memory index: %w", err)
	}
	rows, err := l.tx.QueryContext(ctx, `SELECT id, owner_id, namespace, key, value, text FROM memories ORDER BY id`)
	if err != nil {
		return fmt.Errorf("sqlite: read memories: %w", err)
	}
	type doc struct {
		id         int64
		owner, doc string
	}
	var docs []doc
	for rows.Next() {
		var d doc
		var it carryon.LongTermItem
		var value string
		if err := rows.Scan(&d.id, &d.owner, &it.Namespace, &it.Key, &value, &it.Text); err != nil {
			rows.Close()
			return fmt.Errorf("sqlite: read memories: %w", err)
		}
		it.Value = json.RawMessage(value)
		d.doc = store.LongTermDocument(&it)
		docs = append(docs, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: read memories: %w", err)
	}
	for _, d := range docs {
		if _, err := l.tx.ExecContext(ctx, `INSERT INTO memories_fts (rowid, doc, owner) VALUES (?, ?, ?)`, d.id, d.doc, ownerToken(d.owner)); err != nil {
			return fmt.Errorf("sqlite: index memories: %w", err)
		}
	}
	return nil
}

// columnType is the declared type of a column of the table ("" when unknown).
func (t *dumpTable) columnType(name string) string {
	for _, c := range t.Columns {
		if c.Name == name {
			return c.Type
		}
	}
	return ""
}

// loadValue converts a dumped value to what SQLite keeps in a column of the declared type.
func loadValue(declared string, v any) (any, error) {
	switch x := v.(type) {
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case time.Time:
		return sqlq.Micros(x), nil
	case []byte:
		if !strings.EqualFold(declared, "BLOB") {
			return string(x), nil
		}
	case string:
		if strings.EqualFold(declared, "BLOB") {
			return []byte(x), nil
		}
	case nil, int64, float64:
	default:
		return nil, fmt.Errorf("%T is not a value SQLite stores", v)
	}
	return v, nil
}

// rebuildSessionSearch makes the session search documents of every session from the messages it
// shows, its own and those it reads through its fork chain, less its tombstones: the statement
// of migration 0025 that indexed the messages there were (a released migration never changes).
var rebuildSessionSearch = func() string {
	b, err := migrationFS.ReadFile("migrations/0025_session_search.sql")
	_, q, ok := strings.Cut(string(b), "\nWITH RECURSIVE reach")
	if err != nil || !ok {
		panic("sqlite: migration 0025 has no statement that indexes the messages")
	}
	return "WITH RECURSIVE reach" + strings.TrimRight(strings.TrimSpace(q), ";")
}()
