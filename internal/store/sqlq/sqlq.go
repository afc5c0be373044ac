// Package sqlq holds the SQL that the store drivers share: each statement written once, with ?
// placeholders, and the scanning of its rows into the domain types. A driver (store/sqlite,
// store/postgres) wraps one transaction of its database in a Conn, describes its database in a
// Dialect, and embeds a *Tx, which implements store.Tx; it overrides only the methods whose SQL
// truly differs between databases (full-text search, advisory locks) and keeps to itself what has
// no counterpart (LISTEN/NOTIFY, batching, error codes).
//
// The statements use what both databases understand: ? and ?NNN placeholders (Rebind rewrites
// them to $n for PostgreSQL), INSERT … ON CONFLICT … DO UPDATE with excluded, RETURNING, row
// values, LIMIT with a bound argument (Limit), times as integer unix microseconds and JSON as text.
// A row-locking clause is the Dialect's, empty where the database serialises writers.
//
// Like package store, sqlq knows no business rules: it stores and reads what it is told.
package sqlq

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// Conn is one transaction of a driver, the calls the shared statements make. The driver rewrites
// the placeholders for its database (Rebind) and reports no row as an error that matches
// ErrNoRows; it returns its database's errors as they are (Dialect.Normalize turns them into
// carryon codes).
type Conn interface {
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Query runs a statement that returns rows.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// QueryRow runs a statement that returns at most one row; its Scan reports ErrNoRows when
	// there is none.
	QueryRow(ctx context.Context, query string, args ...any) Row
	// ExecEach runs query once for every argument list, in order (in one round trip where the
	// database can), and stops at the first failure: it returns the index of the list that
	// failed (len(argLists) when the failure belongs to none of them) and the error.
	ExecEach(ctx context.Context, query string, argLists [][]any) (int, error)
	// ExecScript runs text that may hold several statements, as it is: no placeholders are
	// rewritten and no arguments bound (a migration file).
	ExecScript(ctx context.Context, text string) error
}

// Rows is the result of Conn.Query, read like *sql.Rows: Next, then Scan, until Next is false;
// then Err, and Close (which reports nothing: Err does).
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Row is the result of Conn.QueryRow.
type Row interface {
	Scan(dest ...any) error
}

// ErrNoRows is the error Row.Scan reports when there is no row; pgx.ErrNoRows matches it too.
var ErrNoRows = sql.ErrNoRows

// Dialect is what a driver tells the shared statements about its database.
type Dialect struct {
	// Name prefixes the driver's internal errors ("sqlite", "postgres").
	Name string
	// Codes turns the database's own errors into carryon errors where they have a meaning for the
	// caller (a taken key ECONFLICT, a missing referenced row ENOTFOUND, …) and returns the others
	// as they are. Normalize calls it for what it does not handle itself.
	Codes func(error) error
	// LockForUpdate ends a read, in a write transaction, of a row the transaction changes next
	// (PostgreSQL: " FOR NO KEY UPDATE"), so that writers of one row queue and each reads what the
	// previous one committed. Empty where write transactions are serialised (SQLite).
	LockForUpdate string
	// LockForShare ends a read of a row that must stay as read until the transaction ends, while
	// others may read it too (PostgreSQL: " FOR SHARE", which makes an UPDATE or DELETE of the
	// row wait). Empty where writers are serialised.
	LockForShare string
	// LockForDelete ends a read of a row the transaction deletes or replaces (PostgreSQL:
	// " FOR UPDATE", which also blocks new references to the row). Empty where writers are
	// serialised.
	LockForDelete string
	// LockToClaim ends the read of the runs a runner claims, aliased r (PostgreSQL:
	// " FOR NO KEY UPDATE OF r SKIP LOCKED"), so that runners claiming at once take different
	// runs. Empty where writers are serialised.
	LockToClaim string
	// TryLock is a statement that tries to take a lock, named by one int64 argument, to the end
	// of the transaction and selects whether it did (PostgreSQL: "SELECT
	// pg_try_advisory_xact_lock(?)"). Empty where writers are serialised: the lock is held.
	TryLock string
	// LongTermSearch is how the database matches and ranks long-term memory items holding any of
	// terms (store.SearchTerms of a search text: letters and digits only) of the owner.
	LongTermSearch func(owner string, terms []string) LongTermSearch
	// SessionSearch is how the database keeps and matches session search's documents (search.go).
	SessionSearch SessionSearch
	// RandomSessionKeys gives a new session a random positive 63-bit key (sessions.session_key,
	// the integer its messages and revisions are stored under), where writers are not
	// serialised and the schema has no sequence (PostgreSQL, whose BIGINT is 8 bytes whatever
	// its value). Otherwise (SQLite) a new key is one more than the largest, a varint of a byte
	// or two.
	RandomSessionKeys bool
	// NotifyRunEvent, when set, is a statement taking a run id that AppendEvent runs after it
	// stored the run's first event of the transaction, in the same transaction (PostgreSQL:
	// pg_notify on store.RunsChannel, delivered at commit; one a transaction and run is enough).
	NotifyRunEvent string
}

// Tx implements store.Tx with the shared statements over one transaction of a driver. A driver
// embeds it in its own transaction type and overrides what its database does differently.
type Tx struct {
	// Conn is the transaction.
	Conn Conn
	// ReadOnly tells a Read transaction from a Write one: writes are refused in it and reads take
	// no row locks.
	ReadOnly bool
	d        *Dialect
	memo     *memo
	notified map[string]bool // the runs whose events this transaction announced (NotifyRunEvent)
	search   *searchQueue    // the search documents held back (HoldSearch); nil: inserted at once
}

// NewTx returns the shared statements over c, a transaction of a database d describes.
func NewTx(d *Dialect, c Conn, readOnly bool) *Tx {
	return &Tx{Conn: c, ReadOnly: readOnly, d: d}
}

// Writable refuses a write inside a Read transaction.
func (t *Tx) Writable() error {
	if t.ReadOnly {
		return carryon.Errorf(carryon.EINTERNAL, "%s: write inside a read transaction", t.d.Name)
	}
	return nil
}

// lockIfWriting returns lock in a write transaction and "" in a read one, which takes no locks.
func (t *Tx) lockIfWriting(lock string) string {
	if t.ReadOnly {
		return ""
	}
	return lock
}

// Wrap normalises err and adds what the driver was doing to an internal error; carryon errors and
// context errors pass unchanged, and the database's own error stays reachable through errors.As.
func (t *Tx) Wrap(err error, op string) error {
	return t.d.Wrap(err, op)
}

// Normalize turns a driver's error into a carryon error at the store boundary: no row is
// ENOTFOUND, and Codes says what the database's own errors mean (a taken key, a missing
// referenced row, …). Context errors and *carryon.Error pass through; anything else is returned
// as it is, an internal error.
func (d *Dialect) Normalize(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := carryon.AsError(err); ok {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, ErrNoRows) {
		return carryon.Errorf(carryon.ENOTFOUND, "not found")
	}
	return d.Codes(err)
}

// Wrap is Tx.Wrap for code outside a transaction.
func (d *Dialect) Wrap(err error, op string) error {
	if err == nil {
		return nil
	}
	err = d.Normalize(err)
	if _, ok := carryon.AsError(err); ok {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%s: %s: %w", d.Name, op, err)
}

// Conflict returns the ECONFLICT error with the given message when err is a taken key, and err
// normalised (Wrap) when it is anything else.
func (t *Tx) Conflict(err error, op, format string, args ...any) error {
	if err == nil {
		return nil
	}
	if carryon.ErrorCode(t.d.Normalize(err)) == carryon.ECONFLICT {
		return carryon.Errorf(carryon.ECONFLICT, format, args...)
	}
	return t.Wrap(err, op)
}

// NotFound returns the ENOTFOUND error for a missing or foreign row.
func NotFound(what, id string) error {
	return carryon.Errorf(carryon.ENOTFOUND, "%s %s not found", what, id)
}

// Micros converts t to stored unix microseconds.
func Micros(t time.Time) int64 { return t.UnixMicro() }

// FromMicros converts stored unix microseconds to a UTC time.
func FromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// NullMicros stores an optional time (NULL when nil).
func NullMicros(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	us := t.UnixMicro()
	return &us
}

// TimePtr reads an optional time.
func TimePtr(us *int64) *time.Time {
	if us == nil {
		return nil
	}
	t := FromMicros(*us)
	return &t
}

// NullText stores an optional JSON value or string as text (NULL when empty).
func NullText[T ~string | ~[]byte](v T) *string {
	if len(v) == 0 {
		return nil
	}
	s := string(v)
	return &s
}

// RawText reads an optional JSON value.
func RawText(s *string) []byte {
	if s == nil {
		return nil
	}
	return []byte(*s)
}

// Text reads an optional string ("" for NULL).
func Text(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Limit turns a page size into a LIMIT argument: zero or less means no limit, which both
// databases read from the largest bound there is.
func Limit(n int) int64 {
	if n <= 0 {
		return math.MaxInt64
	}
	return int64(n)
}

// scanAll reads every row a query selects with scan, one value per row; op names the read in errors.
func scanAll[T any](t *Tx, ctx context.Context, op string, scan func(Row) (T, error), query string, args ...any) ([]T, error) {
	return scanRows(t, ctx, op, scan, nil, nil, query, args...)
}

// scanWithin is scanAll under the read budget of ctx (store.WithReadBudget): it stops before the
// row whose size (by size) does not fit, and returns the rows before it with store.ErrBudgetSpent.
func scanWithin[T any](t *Tx, ctx context.Context, op string, scan func(Row) (T, error), size func(T) int64, query string, args ...any) ([]T, error) {
	return scanRows(t, ctx, op, scan, store.ReadBudgetOf(ctx), size, query, args...)
}

// scanRows reads the rows of a query with scan, each counted against b by size (b nil: no bound).
func scanRows[T any](t *Tx, ctx context.Context, op string, scan func(Row) (T, error), b *store.ReadBudget, size func(T) int64, query string, args ...any) ([]T, error) {
	rows, err := t.Conn.Query(ctx, query, args...)
	if err != nil {
		return nil, t.Wrap(err, op)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, t.Wrap(err, op)
		}
		if b != nil && !b.Take(size(v)) {
			return out, store.ErrBudgetSpent
		}
		out = append(out, v)
	}
	return out, t.Wrap(rows.Err(), op)
}

// limitArg ends a statement with a LIMIT taken from its last argument. SQLite's planner looks at
// the value bound to a bare `LIMIT ?`, so binding one makes a prepared statement parse again at
// its next run; the cast keeps it prepared (and changes no plan on either database).
const limitArg = ` LIMIT CAST(? AS BIGINT)`
