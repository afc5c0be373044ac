// Package postgres is the server store driver: it implements store.Store on PostgreSQL through
// github.com/jackc/pgx/v5 (a pgxpool) and passes the conformance suite in store/storetest with the
// same semantics and error codes as the SQLite driver, so several server instances can share one
// database.
//
// Transactions. Read runs in a REPEATABLE READ READ ONLY transaction: one snapshot for all of fn.
// Write runs in a READ COMMITTED transaction in which every read-check-write is made safe by row
// locks rather than by a global writer lock:
//   - GetSession and GetRun inside Write lock the row (SELECT … FOR NO KEY UPDATE, the lock an
//     UPDATE takes; unlike FOR UPDATE it does not block foreign-key checks of inserted children),
//     so writers of one session or run queue and each sees the previous one's commit.
//   - UpdateSession and UpdateRun are conditional (… AND version = $n / AND attempt = $n); when no
//     row matches, a re-read tells a missing or foreign row (ENOTFOUND, never leaking existence)
//     from a stale version (EVERSION with CurrentVersion) or attempt (EFENCED).
//   - GetIdempotency inside Write first tries a transaction advisory lock on (owner, key) and then
//     reads the record FOR UPDATE, so two writers with the same request id never run at once, even
//     before the record exists: while the first holds the key, the second is refused at once with
//     EINFLIGHT (it does not hold a connection waiting), and a retry sees the first's record.
//     PutIdempotency is INSERT … ON CONFLICT DO UPDATE ("insert or replace").
//   - AppendEvent locks the run row, then inserts MAX(seq) + 1: seqs are gapless and unique.
//   - DeleteSession locks the session row FOR UPDATE, so a concurrent fork of it either commits
//     first (and is materialised) or fails its foreign key check (ENOTFOUND).
//
// Row locks taken in different orders can deadlock, and Postgres may abort a transaction with a
// serialization failure; Write then rolls back and runs fn again from the start, a bounded number
// of times (SQLSTATE 40P01 and 40001). So fn may run more than once and must touch nothing but
// the transaction. After a statement fails (a taken key, a missing referenced row) the Postgres
// transaction is aborted: fn must return the error, not carry on in the same transaction.
//
// Times are stored as BIGINT unix microseconds in UTC (like the SQLite driver), which gives exact
// equality at the store's microsecond precision. Ids and names use the "C" collation, so ordering
// and keyset paging compare bytes. The schema is created by embedded, versioned migrations applied
// at Open, each in its own transaction under an advisory lock, so instances that start together do
// not race. The package knows no business rules; it only stores and reads what the hub services
// tell it to, and normalises errors into carryon codes.
//
// The statements are package sqlq's, one text shared with the SQLite driver; this package adds
// what is PostgreSQL's own: the row-locking clauses (sqlq.Dialect), the advisory lock on request
// ids, full-text search, batched inserts, LISTEN/NOTIFY, retries and its error codes.
//
// With WithReadReplica, DB has a second pool on a streaming standby: a Read whose context the HTTP
// door marked as tolerating staleness (store.WithStaleRead) runs there while the standby's replay
// is within the bound (replica.go), and on the primary otherwise; nothing else ever reads there.
//
// DB is also a store.Notifier: Notify and Listen carry LISTEN/NOTIFY between processes, so that
// an instance wakes the streams and runners of the others without waiting for their next poll.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/sqlq"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DB is an open PostgreSQL database (a connection pool); it implements store.Store.
type DB struct {
	pool      *pgxpool.Pool
	replica   *replica // nil without WithReadReplica
	retries   int
	txTimeout time.Duration
}

var _ store.Store = (*DB)(nil)

type config struct {
	maxConns   int32
	retries    int
	txTimeout  time.Duration
	readDSN    string
	readMaxLag time.Duration
}

// DefaultTxTimeout is how long a transaction of Read or Write may take before the driver gives up
// on the database (a stalled server or network) and returns an EUNAVAILABLE error, unless
// WithTxTimeout says otherwise.
const DefaultTxTimeout = 30 * time.Second

// DefaultConnectTimeout is how long making a connection may take unless the dsn sets
// connect_timeout: a primary that died without closing its sockets is given up on this soon.
const DefaultConnectTimeout = 5 * time.Second

// IdleInTransactionTimeout is the idle_in_transaction_session_timeout of carryon's connections
// unless the dsn sets one: shorter than the default run lease (15 s), so the row locks of an
// instance paused inside a transaction are gone by the time its runs' leases expire.
const IdleInTransactionTimeout = "10s"

// Option changes how Open configures the pool.
type Option func(*config)

// WithMaxConns sets the largest number of connections the pool opens (default: pgxpool's, the
// greater of 4 and the number of CPUs; a pool_max_conns parameter in the dsn also works).
func WithMaxConns(n int32) Option {
	return func(c *config) { c.maxConns = n }
}

// WithRetries sets how many times Write re-runs a transaction that Postgres aborted with a
// deadlock or a serialization failure before it gives up and returns the error (default 8).
func WithRetries(n int) Option {
	return func(c *config) { c.retries = n }
}

// WithTxTimeout sets how long one transaction of Read or Write (with its wait for a connection)
// may take before it is abandoned as an EUNAVAILABLE error (default DefaultTxTimeout; 0 waits as
// long as the caller's context does).
func WithTxTimeout(d time.Duration) Option {
	return func(c *config) { c.txTimeout = d }
}

// Open connects to the database at dsn (a postgres:// URL or a key=value string) and applies the
// pending migrations. Transactions must not nest: fn of Read or Write must not call Read or Write
// on the same DB.
func Open(ctx context.Context, dsn string, opts ...Option) (*DB, error) {
	cfg := config{retries: 8, txTimeout: DefaultTxTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	if dsn == "" {
		return nil, fmt.Errorf("postgres: empty dsn")
	}
	if cfg.retries < 0 {
		return nil, fmt.Errorf("postgres: negative retry count %d", cfg.retries)
	}
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse dsn: %w", err)
	}
	if cfg.maxConns > 0 {
		pcfg.MaxConns = cfg.maxConns
	}
	if pcfg.ConnConfig.ConnectTimeout == 0 {
		pcfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	if _, set := pcfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"]; !set {
		// A process paused in the middle of a transaction (SIGSTOP, a frozen VM) would hold its
		// row locks until it woke up, and other instances, which claim runs with SKIP LOCKED,
		// could not take its runs over. PostgreSQL ends such a session after this long; no
		// transaction of carryon waits for anything but the database.
		pcfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = IdleInTransactionTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	db := &DB{pool: pool, retries: cfg.retries, txTimeout: cfg.txTimeout}
	if cfg.readDSN != "" {
		if db.replica, err = openReplica(ctx, cfg.readDSN, cfg.readMaxLag, pcfg.MaxConns); err != nil {
			pool.Close()
			return nil, err
		}
	}
	if err := db.Ping(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Ping checks that the database answers and takes writes: a server in recovery (a standby, or a
// primary demoted by a failover that the pool's connections still reach) is not ready, and the
// error is EUNAVAILABLE.
func (db *DB) Ping(ctx context.Context) error {
	var standby bool
	if err := db.pool.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&standby); err != nil {
		if ctx.Err() == nil {
			return store.Unavailable(fmt.Errorf("postgres: ping: %w", err))
		}
		return fmt.Errorf("postgres: ping: %w", err)
	}
	if standby {
		return store.Unavailable(errors.New("postgres: ping: the server is in recovery (a standby), not a primary"))
	}
	return nil
}

// txContext is ctx bounded by the driver's transaction deadline.
func (db *DB) txContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if db.txTimeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, db.txTimeout)
}

// Close releases every connection of the pools, waiting for those in use to be returned.
func (db *DB) Close() error {
	db.pool.Close()
	if db.replica != nil {
		db.replica.pool.Close()
	}
	return nil
}

// Read runs fn in a REPEATABLE READ READ ONLY transaction: it sees one snapshot.
// A connection-level fault (see unavailable) is an EUNAVAILABLE error. With a read replica
// (WithReadReplica), a Read whose context is marked store.WithStaleRead is served by the replica
// when it is within its bound, and the mark records it; otherwise the primary serves it, and fn
// may then have run on the replica first.
func (db *DB) Read(ctx context.Context, fn func(store.Tx) error) error {
	txCtx, cancel := db.txContext(ctx)
	defer cancel()
	if sr := store.StaleReadOf(ctx); sr != nil && db.replica != nil {
		if served, err := db.replica.read(txCtx, fn); served {
			sr.ServedByReplica()
			return err
		}
	}
	return unavailable(ctx, txCtx, db.read(txCtx, fn))
}

func (db *DB) read(ctx context.Context, fn func(store.Tx) error) error {
	ptx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return dialect.Wrap(err, "begin read")
	}
	defer ptx.Rollback(context.WithoutCancel(ctx))
	if err := fn(newTx(ptx, true)); err != nil {
		return err
	}
	return dialect.Wrap(ptx.Commit(ctx), "commit read")
}

// Write runs fn in a READ COMMITTED transaction and commits when fn returns nil; otherwise it
// rolls back and returns fn's error. When Postgres aborts the transaction with a deadlock or a
// serialization failure, Write rolls back and runs fn again in a new transaction, up to the
// configured number of retries: fn may run more than once and must only touch the transaction.
// A connection-level fault is an EUNAVAILABLE error and is not retried here: the transaction may
// or may not have committed, which only the caller's idempotency can settle.
func (db *DB) Write(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	if store.InsideWrite(ctx, db) {
		return carryon.Errorf(carryon.EINTERNAL, "postgres: Write called inside a write transaction of the same store")
	}
	for attempt := 0; ; attempt++ {
		err := db.writeOnce(ctx, fn)
		if err == nil || !retryable(err) || attempt >= db.retries {
			return err
		}
		// Back off a little, with jitter, so the transactions that deadlocked do not meet again.
		d := time.Duration(1+rand.IntN(4<<min(attempt, 5))) * time.Millisecond
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		}
	}
}

func (db *DB) writeOnce(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	txCtx, cancel := db.txContext(ctx)
	defer cancel()
	return unavailable(ctx, txCtx, db.writeTx(txCtx, fn))
}

func (db *DB) writeTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	ptx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted, AccessMode: pgx.ReadWrite})
	if err != nil {
		return dialect.Wrap(err, "begin")
	}
	defer ptx.Rollback(context.WithoutCancel(ctx))
	if err := fn(store.WithinWrite(ctx, db), newTx(ptx, false)); err != nil {
		return err
	}
	return dialect.Wrap(ptx.Commit(ctx), "commit")
}

// tx implements store.Tx over one PostgreSQL transaction: the shared statements of package sqlq,
// and the methods PostgreSQL does its own way. ReadOnly tells a Read transaction from a Write one
// (only the latter locks the rows it reads for a later write).
type tx struct {
	*sqlq.Tx
	tx pgx.Tx
}

var _ store.Tx = (*tx)(nil)

func newTx(ptx pgx.Tx, readOnly bool) *tx {
	return &tx{Tx: sqlq.NewTx(dialect, conn{ptx}, readOnly), tx: ptx}
}
