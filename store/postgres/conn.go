package postgres

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/sqlq"
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
	TryLock:           "SELECT pg_try_advisory_xact_lock(?)",
	LongTermSearch:    longTermSearch,
	SessionSearch:     sessionSearch,
	RandomSessionKeys: true,
	NotifyRunEvent:    "SELECT pg_notify('" + store.RunsChannel + "', ?)",
}

// conn is a pgx transaction as a sqlq.Conn: it rewrites the shared statements' ? placeholders
// to $n, once a statement text (rebind).
type conn struct{ tx pgx.Tx }

// rebound caches the $n form of each statement text rewritten so far, up to maxRebound texts
// (the shared statements are a few hundred constant strings; a statement built with a variable
// number of placeholders adds a text a count, and the bound keeps an unusual caller from growing
// the cache without end).
var (
	rebound     sync.Map
	reboundSize atomic.Int64
)

const maxRebound = 4096

// rebind is sqlq.Rebind, cached.
func rebind(query string) string {
	if q, ok := rebound.Load(query); ok {
		return q.(string)
	}
	q := sqlq.Rebind(query)
	if reboundSize.Load() < maxRebound {
		if _, loaded := rebound.LoadOrStore(query, q); !loaded {
			reboundSize.Add(1)
		}
	}
	return q
}

func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := c.tx.Exec(ctx, rebind(query), args...)
	return tag.RowsAffected(), err
}

func (c conn) Query(ctx context.Context, query string, args ...any) (sqlq.Rows, error) {
	return c.tx.Query(ctx, rebind(query), args...)
}

func (c conn) QueryRow(ctx context.Context, query string, args ...any) sqlq.Row {
	return c.tx.QueryRow(ctx, rebind(query), args...)
}

// ExecEach sends every statement in one batch: one round trip.
func (c conn) ExecEach(ctx context.Context, query string, argLists [][]any) (int, error) {
	query = rebind(query)
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
