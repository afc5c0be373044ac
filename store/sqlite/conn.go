package sqlite

import (
	"context"
	"database/sql"

	"github.com/carryon-hub/carryon/store/sqlq"
)

// dialect is SQLite as the shared statements of package sqlq see it: write transactions are
// serialised (BEGIN IMMEDIATE), so no read needs a row lock.
var dialect = &sqlq.Dialect{Name: "sqlite", Codes: codes, LongTermSearch: longTermSearch}

// conn is a database/sql transaction as a sqlq.Conn; SQLite takes the ? placeholders as they are.
// In a write batch (detach) its statements run without the caller's cancellation: SQLite answers a
// cancellation by interrupting the statement, and an interrupted statement may roll back the
// whole transaction, other members' writes included. Write checks the context around fn instead.
// A write batch also keeps its statements prepared (stmts): its members run the same few
// statements, and parsing them again for every member is most of a small write's CPU. The
// statements also stay prepared from one batch to the next (cache), on the connections they ran
// on, so a lone writer does not parse them for every write either.
type conn struct {
	tx     *sql.Tx
	detach bool
	stmts  map[string]*sql.Stmt
	cache  *stmtCache
}

// maxCachedStmts bounds the statements kept prepared across batches (the shared SQL has fewer;
// statements built with a varying number of arguments beyond that are prepared per batch).
const maxCachedStmts = 256

// stmtCache is the statements of write batches prepared on the database, by query text. Only the
// leader of the running batch uses it (under the write semaphore), so it needs no lock.
type stmtCache struct {
	db *sql.DB
	m  map[string]*sql.Stmt
}

// stmt returns query prepared on the database, or nil when the cache is full or preparing failed
// (the caller prepares it in its transaction, which reports the error).
func (c *stmtCache) stmt(ctx context.Context, query string) *sql.Stmt {
	if st, ok := c.m[query]; ok {
		return st
	}
	if len(c.m) >= maxCachedStmts {
		return nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.m[query] = st
	return st
}

// close releases the cached statements.
func (c *stmtCache) close() {
	for _, st := range c.m {
		st.Close()
	}
	clear(c.m)
}

// prepared returns the batch's prepared statement of query, or nil outside a batch. Only
// statements that leave no rows open (Exec, QueryRow) use it: a statement prepared once must not
// be run again while its rows are read.
func (c conn) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	if c.stmts == nil {
		return nil, nil
	}
	if st, ok := c.stmts[query]; ok {
		return st, nil
	}
	var st *sql.Stmt
	if c.cache != nil {
		if ps := c.cache.stmt(ctx, query); ps != nil {
			st = c.tx.StmtContext(ctx, ps) // reuses the connection's prepared copy when it has one
		}
	}
	if st == nil {
		var err error
		if st, err = c.tx.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
	}
	c.stmts[query] = st
	return st, nil
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
	rows, err := c.tx.QueryContext(c.ctx(ctx), query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

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
	stmt, err := c.prepared(ctx, query)
	if err != nil {
		return 0, err
	}
	if stmt == nil {
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

// sqlRows is *sql.Rows as sqlq.Rows, whose Close reports nothing (Err does).
type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { r.Rows.Close() }

// ExecScript runs text with no arguments; SQLite runs each of its statements in turn.
func (c conn) ExecScript(ctx context.Context, text string) error {
	_, err := c.tx.ExecContext(c.ctx(ctx), text)
	return err
}
