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
type conn struct {
	tx     *sql.Tx
	detach bool
}

func (c conn) ctx(ctx context.Context) context.Context {
	if c.detach {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := c.tx.ExecContext(c.ctx(ctx), query, args...)
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
	return c.tx.QueryRowContext(c.ctx(ctx), query, args...)
}

// ExecEach prepares the statement once and runs it for every argument list.
func (c conn) ExecEach(ctx context.Context, query string, argLists [][]any) (int, error) {
	stmt, err := c.tx.PrepareContext(c.ctx(ctx), query)
	if err != nil {
		return 0, err
	}
	defer stmt.Close()
	for i, args := range argLists {
		if _, err := stmt.ExecContext(c.ctx(ctx), args...); err != nil {
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
