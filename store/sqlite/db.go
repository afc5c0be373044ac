// Package sqlite is the embedded store driver: it implements store.Store on modernc.org/sqlite
// (pure Go, no cgo) and passes the conformance suite in store/storetest.
//
// A file database runs in WAL mode with foreign keys on and a busy timeout, and every write
// transaction starts with BEGIN IMMEDIATE, so a transaction that reads and then writes never hits
// SQLITE_BUSY_SNAPSHOT: writers queue for the write lock up front (within this process on a
// semaphore, across processes on SQLite's busy timeout). Concurrent writes of this process commit
// together, in one transaction and one fsync, each under a savepoint of its own (group commit,
// groupcommit.go). Read transactions are deferred and see one snapshot. Reads and writes keep
// their statements prepared from one transaction to the next (conn.go). The schema is created by
// embedded, versioned migrations applied at Open.
//
// Times are stored as INTEGER unix microseconds in UTC. The statements are package sqlq's, one
// text shared with the PostgreSQL driver; this package adds what is SQLite's own: the FTS5 index
// of long-term memory, the writer queue, pragmas and its error codes. The package knows no business
// rules; it only stores and reads what the hub services tell it to, and normalises errors into
// carryon codes.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/sqlq"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// DB is an open SQLite database; it implements store.Store.
type DB struct {
	sql *sql.DB
	// writeSem serialises write transactions within this process, so writers wait on a channel
	// (and their context) instead of spinning on SQLite's busy handler.
	writeSem chan struct{}
	// w queues the writers of Write for group commit (groupcommit.go).
	w writer
	// stmts keeps the statements of write batches and reads prepared (conn.go); nil for an
	// in-memory database, whose one connection is the transaction's own (preparing on the pool
	// would wait for it).
	stmts    *stmtCache
	inMemory bool
	// ws does the commits' fsync outside the write lock (walsync.go); nil when SQLite does it
	// (synchronous other than FULL, a "file:" URI) or there is no file.
	ws *walSync
}

var _ store.Store = (*DB)(nil)

type config struct {
	synchronous string
	busyTimeout time.Duration
}

// journalSizeLimit bounds the WAL file: SQLite checkpoints it into the database every 1,000
// pages (wal_autocheckpoint, on by default) and, when a checkpoint has reset it, truncates a WAL
// that grew beyond this back to it. Without the limit the file keeps the largest size it ever
// reached (a burst of writes while a long read held back the checkpoint).
const journalSizeLimit = 64 << 20

// Option changes how Open configures the database.
type Option func(*config)

// WithSynchronous sets PRAGMA synchronous: "FULL" (the default) makes every acknowledged commit
// survive a power loss or OS crash; "NORMAL" is faster in WAL mode but a commit acknowledged just
// before a power loss may be lost (it still survives a crash of the process, e.g. kill -9).
// "OFF" and "EXTRA" are accepted too.
func WithSynchronous(level string) Option {
	return func(c *config) { c.synchronous = strings.ToUpper(level) }
}

// WithBusyTimeout sets how long a connection waits for a lock held by another process before it
// gives up with SQLITE_BUSY (default 10s).
func WithBusyTimeout(d time.Duration) Option {
	return func(c *config) { c.busyTimeout = d }
}

// Open opens (creating if needed) the database at dsn, a file path or ":memory:", and applies the
// pending migrations. A ":memory:" database lives in one connection and disappears on Close; on
// it, readers and the writer take turns. Transactions must not nest: fn of Read or Write must not
// call Read or Write on the same DB.
func Open(ctx context.Context, dsn string, opts ...Option) (*DB, error) {
	cfg := config{synchronous: "FULL", busyTimeout: 10 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	switch cfg.synchronous {
	case "OFF", "NORMAL", "FULL", "EXTRA":
	default:
		return nil, fmt.Errorf("sqlite: unknown synchronous level %q", cfg.synchronous)
	}
	if dsn == "" {
		return nil, fmt.Errorf("sqlite: empty dsn")
	}
	inMemory := dsn == ":memory:"
	if !inMemory {
		if err := checkPath(dsn); err != nil {
			return nil, err
		}
		createPrivate(dsn)
	}

	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", cfg.busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	if !inMemory {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", journalSizeLimit))
	}
	var ws *walSync
	if cfg.synchronous == "FULL" && !inMemory && !strings.HasPrefix(dsn, "file:") {
		path, _, _ := strings.Cut(dsn, "?")
		ws = newWALSync(path)
		cfg.synchronous = "NORMAL" // and each commit's fsync after it, by ws
	}
	q.Add("_pragma", "synchronous("+cfg.synchronous+")")
	// Non-read-only transactions begin with BEGIN IMMEDIATE; read-only ones (sql.TxOptions.ReadOnly)
	// with a deferred BEGIN.
	q.Set("_txlock", "immediate")
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	sdb, err := sql.Open("sqlite", dsn+sep+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", dsn, err)
	}
	if inMemory {
		// Every connection to ":memory:" is a database of its own: keep exactly one, forever.
		sdb.SetMaxOpenConns(1)
		sdb.SetMaxIdleConns(1)
		sdb.SetConnMaxLifetime(0)
		sdb.SetConnMaxIdleTime(0)
	} else {
		sdb.SetMaxIdleConns(4)
	}
	db := &DB{sql: sdb, writeSem: make(chan struct{}, 1), inMemory: inMemory, ws: ws}
	if !inMemory {
		db.stmts = newStmtCache(sdb)
	}
	if err := sdb.PingContext(ctx); err != nil {
		sdb.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", dsn, err)
	}
	if err := db.Migrate(ctx); err != nil {
		sdb.Close()
		return nil, err
	}
	return db, nil
}

// checkPath tells why a database file cannot be opened where SQLite would only say "unable to
// open database file": its directory is missing or not a directory, or the path is a directory.
// A "file:" URI is left to SQLite.
func checkPath(dsn string) error {
	if strings.HasPrefix(dsn, "file:") {
		return nil
	}
	path, _, _ := strings.Cut(dsn, "?")
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("sqlite: open %s: it is a directory, not a database file", path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("sqlite: open %s: directory %s does not exist", path, dir)
	case err == nil && !fi.IsDir():
		return fmt.Errorf("sqlite: open %s: %s is not a directory", path, dir)
	}
	return nil
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.sql.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	return nil
}

// Close releases the database; a file database is checkpointed by SQLite as its last connection closes.
func (db *DB) Close() error {
	if db.stmts != nil {
		db.writeSem <- struct{}{} // after the running batch, if any
		db.stmts.close()
		<-db.writeSem
	}
	if db.ws != nil {
		defer db.ws.close()
	}
	return db.sql.Close()
}

// Read runs fn in a deferred (read) transaction: it sees one snapshot from its first read on.
// It returns once every commit fn could have seen is on disk (walsync.go), so fn must not show
// what it reads to anyone but its caller before Read returns; a ctx marked with
// store.WithReadAhead does not wait.
func (db *DB) Read(ctx context.Context, fn func(store.Tx) error) error {
	err := db.read(ctx, fn)
	if db.ws != nil && !store.ReadAhead(ctx) {
		if serr := db.ws.waitAll(); serr != nil {
			return serr
		}
	}
	return err
}

func (db *DB) read(ctx context.Context, fn func(store.Tx) error) error {
	stx, err := db.sql.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return dialect.Normalize(fmt.Errorf("sqlite: begin read: %w", err))
	}
	defer stx.Rollback()
	c := conn{tx: stx}
	if db.stmts != nil {
		c.stmts = &txStmts{cache: db.stmts}
	}
	if err := fn(newTx(c, true)); err != nil {
		return err
	}
	if err := stx.Commit(); err != nil {
		return dialect.Normalize(fmt.Errorf("sqlite: commit read: %w", err))
	}
	return nil
}

// writeTx runs fn alone in a BEGIN IMMEDIATE transaction, between the batches of Write (Migrate).
func (db *DB) writeTx(ctx context.Context, fn func(*sql.Tx) error) error {
	select {
	case db.writeSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-db.writeSem }()
	stx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return dialect.Normalize(fmt.Errorf("sqlite: begin immediate: %w", err))
	}
	defer stx.Rollback()
	if err := fn(stx); err != nil {
		return err
	}
	if err := db.commit(stx); err != nil {
		return dialect.Normalize(fmt.Errorf("sqlite: commit: %w", err))
	}
	return nil
}

// commit commits stx and returns once it is durable: SQLite's own fsync, or ws's.
func (db *DB) commit(stx *sql.Tx) error {
	if db.ws == nil {
		return stx.Commit()
	}
	n, err := db.ws.commit(stx)
	if err != nil {
		return err
	}
	return db.ws.wait(n)
}

// tx implements store.Tx over one SQLite transaction: the shared statements of package sqlq, and
// the methods SQLite does its own way.
type tx struct {
	*sqlq.Tx
	tx *sql.Tx
}

var _ store.Tx = (*tx)(nil)

func newTx(c conn, readOnly bool) *tx {
	return &tx{Tx: sqlq.NewTx(dialect, c, readOnly), tx: c.tx}
}
