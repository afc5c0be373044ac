package sqlite

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// Group commit. SQLite has one writer, and at synchronous=FULL every commit waits for an fsync:
// one transaction per Write makes a writer's throughput the disk's fsync rate, however many
// callers wait. Instead, the writers that queue while a transaction commits go into the next
// transaction together: one BEGIN IMMEDIATE, each member's fn under a SAVEPOINT of its own (an
// error or a panic of fn rolls back to it, so it undoes that member's effects only), and one
// COMMIT, one fsync, for all of them. Durability does not change: Write returns only after the
// commit that holds its effects is on disk, and the commit's error goes to every member whose fn
// succeeded. That fsync runs after the write lock is released (walsync.go), so the next batch
// does its work while the disk flushes this one.
//
// The batch is run by a leader, the goroutine of one of its members: the first writer that finds
// no batch running leads the next one; when its batch is done it hands the lead to the oldest
// waiting writer, which takes every writer waiting by then (up to maxBatch). Members run one
// after another in arrival order, on the leader's goroutine, and each sees the effects of the
// members before it.

// maxBatch bounds the members of one transaction, so that a batch holds the write lock for a
// bounded time.
const maxBatch = 128

// writer is the queue of writers waiting for the next batch.
type writer struct {
	mu      sync.Mutex
	pending []*member
	leading bool // a leader is running a batch (or about to)
}

// member is one Write waiting in (or run by) a batch.
type member struct {
	ctx  context.Context
	fn   func(context.Context, store.Tx) error
	err  error
	done chan struct{} // closed by the leader when err is final
	lead chan struct{} // closed when this member is to lead the next batch
}

// Write runs fn in a write transaction, possibly together with other writers' fns (see above),
// and returns fn's error, or the commit's. fn's error rolls back fn's effects only; a panic in fn
// is recovered into an EINTERNAL error of this call. A context done before fn starts returns
// the context's error and runs nothing; one done while fn runs rolls fn's effects back and
// returns the context's error (fn's statements are not interrupted half-way: an interrupted
// statement may roll back the whole transaction, which holds other members' effects). A Write
// given the context of a member's fn (store.WithinWrite) is refused with EINTERNAL: it would wait
// for the batch that waits for it.
func (db *DB) Write(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if store.InsideWrite(ctx, db) {
		return carryon.Errorf(carryon.EINTERNAL, "sqlite: Write called inside a write transaction of the same store")
	}
	m := &member{ctx: ctx, fn: fn, done: make(chan struct{}), lead: make(chan struct{})}
	w := &db.w
	w.mu.Lock()
	if !w.leading {
		w.leading = true
		w.mu.Unlock()
		db.leadBatch(m)
		return m.err
	}
	w.pending = append(w.pending, m)
	w.mu.Unlock()
	select {
	case <-m.done:
		return m.err
	case <-m.lead:
		db.leadBatch(m)
		return m.err
	case <-ctx.Done():
	}
	w.mu.Lock()
	if i := slices.Index(w.pending, m); i >= 0 {
		w.pending = slices.Delete(w.pending, i, i+1)
		w.mu.Unlock()
		return ctx.Err()
	}
	w.mu.Unlock()
	// A batch took m already (or m is to lead one): its outcome is decided there.
	select {
	case <-m.done:
	case <-m.lead:
		db.leadBatch(m)
	}
	return m.err
}

// leadBatch runs first and the writers waiting behind it in one transaction, then hands the lead
// to the next waiting writer or gives it up. A panic outside the members' fns (in the driver)
// fails the batch's members, never the queue.
func (db *DB) leadBatch(first *member) {
	w := &db.w
	db.writeSem <- struct{}{} // Migrate writes outside the queue
	w.mu.Lock()
	n := min(len(w.pending), maxBatch-1)
	batch := append([]*member{first}, w.pending[:n]...)
	w.pending = slices.Delete(w.pending, 0, n)
	w.mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			for _, m := range batch {
				m.err = carryon.Errorf(carryon.EINTERNAL, "sqlite: write batch panicked: %v", p)
			}
		}
		<-db.writeSem
		w.mu.Lock()
		if len(w.pending) > 0 {
			next := w.pending[0]
			w.pending = slices.Delete(w.pending, 0, 1)
			close(next.lead)
		} else {
			w.leading = false
		}
		w.mu.Unlock()
		// The next batch runs while this one's fsync does (walsync.go). Members that failed
		// wait too: their errors may tell of commits (a version) not on disk yet.
		if db.ws != nil {
			if err := db.ws.waitAll(); err != nil {
				for _, m := range batch {
					if m.err == nil {
						m.err = err
					}
				}
			}
		}
		for _, m := range batch[1:] {
			close(m.done)
		}
	}()
	db.runBatch(batch)
}

// runBatch runs the members' fns in one BEGIN IMMEDIATE transaction, each under a savepoint, and
// commits what succeeded. It sets every member's err.
func (db *DB) runBatch(batch []*member) {
	fail := func(ms []*member, err error) {
		for _, m := range ms {
			m.err = err
		}
	}
	// The transaction belongs to no member: one member's context must not end it.
	stx, err := db.sql.BeginTx(context.Background(), nil)
	if err != nil {
		fail(batch, dialect.Normalize(fmt.Errorf("sqlite: begin immediate: %w", err)))
		return
	}
	defer stx.Rollback()
	c := conn{tx: stx, detach: true, stmts: &txStmts{cache: db.stmts}}
	tx := newTx(c, false)
	tx.HoldSearch() // one FTS5 segment a batch, not one a member (sqlq.searchQueue)
	ctx := context.Background()
	var ok []*member
	for i, m := range batch {
		if m.err = m.ctx.Err(); m.err != nil {
			continue
		}
		tx.Forget() // what the member before read, it may have rolled back
		if _, err := c.Exec(ctx, `SAVEPOINT member`); err != nil {
			fail(append(ok, batch[i:]...), dialect.Normalize(fmt.Errorf("sqlite: savepoint: %w", err)))
			return
		}
		m.err = runMember(store.WithinWrite(m.ctx, db), m.fn, tx)
		if m.err == nil {
			m.err = m.ctx.Err()
		}
		if m.err != nil {
			if _, err := c.Exec(ctx, `ROLLBACK TO member`); err != nil {
				// The database rolled the whole transaction back (SQLite does on some errors):
				// nothing of the batch can commit.
				fail(append(ok, batch[i+1:]...), dialect.Normalize(fmt.Errorf("sqlite: rollback to savepoint after %v: %w", m.err, err)))
				return
			}
		}
		tx.MemberEnded(m.err == nil)
		if _, err := c.Exec(ctx, `RELEASE member`); err != nil {
			fail(append(ok, batch[i:]...), dialect.Normalize(fmt.Errorf("sqlite: release savepoint: %w", err)))
			return
		}
		if m.err == nil {
			ok = append(ok, m)
		}
	}
	if len(ok) == 0 {
		return
	}
	if err := tx.FlushSearch(ctx); err != nil {
		fail(ok, dialect.Normalize(fmt.Errorf("sqlite: %w", err)))
		return
	}
	commit := stx.Commit
	if db.ws != nil {
		commit = func() error { _, err := db.ws.commit(stx); return err } // its fsync follows in leadBatch
	}
	if err := commit(); err != nil {
		fail(ok, dialect.Normalize(fmt.Errorf("sqlite: commit: %w", err)))
	}
}

// runMember runs fn, turning a panic into an internal error of its member.
func runMember(ctx context.Context, fn func(context.Context, store.Tx) error, tx store.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = carryon.Errorf(carryon.EINTERNAL, "a write panicked: %v", p)
		}
	}()
	return fn(ctx, tx)
}
