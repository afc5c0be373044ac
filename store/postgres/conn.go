package postgres

import (
	"context"

	"github.com/carryon-hub/carryon/store/sqlq"
	"github.com/jackc/pgx/v5"
)

// dialect is PostgreSQL as the shared statements of package sqlq see it: writers are made safe by
// row locks, so reads that precede a write lock the rows they read.
var dialect = &sqlq.Dialect{
	Name:              "postgres",
	Codes:             codes,
	LockForUpdate:     " FOR NO KEY UPDATE",
	LockForShare:      " FOR SHARE",
	LockForDelete:     " FOR UPDATE",
	LockToClaim:       " FOR NO KEY UPDATE OF r SKIP LOCKED",
	LongTermSearch:    longTermSearch,
	RandomSessionKeys: true,
}

// conn is a pgx transaction as a sqlq.Conn: it rewrites the shared statements' ? placeholders
// to $n.
type conn struct{ tx pgx.Tx }

func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := c.tx.Exec(ctx, sqlq.Rebind(query), args...)
	return tag.RowsAffected(), err
}

func (c conn) Query(ctx context.Context, query string, args ...any) (sqlq.Rows, error) {
	return c.tx.Query(ctx, sqlq.Rebind(query), args...)
}

func (c conn) QueryRow(ctx context.Context, query string, args ...any) sqlq.Row {
	return c.tx.QueryRow(ctx, sqlq.Rebind(query), args...)
}

// ExecEach sends every statement in one batch: one round trip.
func (c conn) ExecEach(ctx context.Context, query string, argLists [][]any) (int, error) {
	query = sqlq.Rebind(query)
	b := &pgx.Batch{}
	for _, args := range argLists {
		b.Queue(query, args...)
	}
	br := c.tx.SendBatch(ctx, b)
	for i := range argLists {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return i, err
		}
	}
	return len(argLists), br.Close()
}

// ExecScript runs text with no arguments, which pgx sends by the simple protocol: several
// statements may follow each other.
func (c conn) ExecScript(ctx context.Context, text string) error {
	_, err := c.tx.Exec(ctx, text)
	return err
}
