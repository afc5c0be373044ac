package sqlite

import (
	"context"
	"database/sql"
	"sync"

	"github.com/carryon-hub/carryon/internal/store/sqlq"
)

// dialect is SQLite as the shared statements of package sqlq see it: write transactions are
// serialised (BEGIN IMMEDIATE), so no read needs a row lock.
var dialect = &sqlq.Dialect{Name: "sqlite", Codes: codes, LongTermSearch: longTermSearch, SessionSearch: sessionSearch}

// conn is a database/sql transaction as a sqlq.Conn; SQLite takes the ? placeholders as they are.
// In a write batch (detach) its statements run without the caller's cancellation: SQLite answers a
// cancellation by interrupting the statement, and an interrupted statement may roll back the
// whole transaction, other members' writes included. Write checks the context around fn instead.
//
// Its statements stay prepared (stmts): parsing a statement is much of what a small write or read
// costs in CPU, more than running it (the statement that lists a fork's ranges grows with the
// number of ranges). A write batch's members run the same few statements, so it prepares each
// once for all of them; and both write batches and read transactions take their statements from
// the database's cache (stmtCache), where they stay prepared from one transaction to the next, on
// every connection of the pool they ran on. A statement prepared once must not run again while
// its rows are read (SQLite resets it under them): a use of a statement whose rows are still open
// (a query inside the loop over another's rows of the same text) is parsed on its own.
type conn struct {
	tx     *sql.Tx
	detach bool
	stmts  *txStmts // nil: every statement is parsed where it runs (reads of an in-memory database)
}

// txStmts is the statements one transaction prepared, by query text.
type txStmts struct {
	cache *stmtCache // nil: prepared for this transaction only (an in-memory database's batch)
	m     map[string]*txStmt
}

// txStmt is a statement prepared for one transaction; reading is set while the rows of a Query
// of it are open. A transaction is used by one goroutine at a time, so reading needs no lock.
type txStmt struct {
	*sql.Stmt
	reading bool
}

// maxCachedStmts bounds the statements kept prepared across transactions. The shared SQL has
// fewer (the conformance suite runs 157 texts in all): the texts that vary are built with a
// varying number of arguments (one triple per fork range, up to 50 in one statement; one term per
// searched word), and those beyond the bound are prepared in the transaction that runs them.
const maxCachedStmts = 256

// stmtCache is the statements prepared on the database, by query text, for the write batches and
// the concurrent read transactions (so under mu). A transaction runs one through
// sql.Tx.StmtContext, which reuses the copy prepared on the transaction's connection, or prepares
// one there. Nil for an in-memory database: its one connection is the transaction's own, and
// preparing on the pool would wait for it.
type stmtCache struct {
	db *sql.DB
	mu sync.RWMutex
	m  map[string]*sql.Stmt // nil once closed
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}}
}

// stmt returns query prepared on the database, or nil when the cache is full, closed or
// preparing failed (the caller prepares it in its transaction, which reports the error).
func (c *stmtCache) stmt(ctx context.Context, query string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	st, ok := c.m[query]
	full := len(c.m) >= maxCachedStmts || c.m == nil
	c.mu.RUnlock()
	if ok || full {
		return st
	}
	st, err := c.db.PrepareContext(ctx, query) // outside the lock: it may open a connection
	if err != nil {
		return nil
	}
	c.mu.Lock()
	prev, ok := c.m[query] // another transaction prepared it meanwhile
	keep := !ok && c.m != nil && len(c.m) < maxCachedStmts
	if keep {
		c.m[query] = st
	}
	c.mu.Unlock()
	if keep {
		return st
	}
	st.Close()
	return prev
}

// len returns how many statements the cache holds.
func (c *stmtCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// close releases the cached statements; a transaction still running one keeps its connection's
// copy until it ends (database/sql closes a statement when its last user is done).
func (c *stmtCache) close() {
	c.mu.Lock()
	m := c.m
	c.m = nil
	c.mu.Unlock()
	for _, st := range m {
		st.Close()
	}
}

// prepared returns the transaction's prepared statement of query, or nil when the transaction
// keeps none or the statement's rows are being read (the caller runs the text itself).
func (c conn) prepared(ctx context.Context, query string) (*txStmt, error) {
	if c.stmts == nil {
		return nil, nil
	}
	if st, ok := c.stmts.m[query]; ok {
		if st.reading {
			return nil, nil
		}
		return st, nil
	}
	var st *sql.Stmt
	if ps := c.stmts.cache.stmt(ctx, query); ps != nil {
		st = c.tx.StmtContext(ctx, ps) // reuses the connection's prepared copy when it has one
	} else {
		var err error
		if st, err = c.tx.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
	}
	if c.stmts.m == nil {
		c.stmts.m = map[string]*txStmt{}
	}
	ts := &txStmt{Stmt: st}
	c.stmts.m[query] = ts
	return ts, nil
}

func (c conn) ctx(ctx context.Context) context.Context {
	if c.detach {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	ctx = c.ctx(ctx)
	st, err := c.prepared(ctx, query)
	if err != nil {
		return 0, err
	}
	var res sql.Result
	if st != nil {
		res, err = st.ExecContext(ctx, args...)
	} else {
		res, err = c.tx.ExecContext(ctx, query, args...)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (c conn) Query(ctx context.Context, query string, args ...any) (sqlq.Rows, error) {
	ctx = c.ctx(ctx)
	st, err := c.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		rows, err := c.tx.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		return &sqlRows{Rows: rows}, nil
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	st.reading = true
	return &sqlRows{Rows: rows, st: st}, nil
}

// QueryRow runs a prepared statement too: its row is read by Scan, which the shared statements
// call right away, before the statement can run again.
func (c conn) QueryRow(ctx context.Context, query string, args ...any) sqlq.Row {
	ctx = c.ctx(ctx)
	if st, err := c.prepared(ctx, query); err != nil {
		return errRow{err}
	} else if st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return c.tx.QueryRowContext(ctx, query, args...)
}

// errRow is a Row whose Scan reports err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// ExecEach prepares the statement once and runs it for every argument list.
func (c conn) ExecEach(ctx context.Context, query string, argLists [][]any) (int, error) {
	ctx = c.ctx(ctx)
	ts, err := c.prepared(ctx, query)
	if err != nil {
		return 0, err
	}
	var stmt *sql.Stmt
	if ts != nil {
		stmt = ts.Stmt
	} else {
		if stmt, err = c.tx.PrepareContext(ctx, query); err != nil {
			return 0, err
		}
		defer stmt.Close()
	}
	for i, args := range argLists {
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return i, err
		}
	}
	return len(argLists), nil
}

// sqlRows is *sql.Rows as sqlq.Rows, whose Close reports nothing (Err does) and frees the
// prepared statement st, if any, for its next run.
type sqlRows struct {
	*sql.Rows
	st *txStmt
}

func (r *sqlRows) Close() {
	r.Rows.Close()
	if r.st != nil {
		r.st.reading = false
		r.st = nil
	}
}

// ExecScript runs text with no arguments; SQLite runs each of its statements in turn.
func (c conn) ExecScript(ctx context.Context, text string) error {
	_, err := c.tx.ExecContext(c.ctx(ctx), text)
	return err
}
