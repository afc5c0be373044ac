package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/storetest"
	"github.com/carryon-hub/carryon/store/postgres"
)

// TestTwoPoolsLockedWrites writes from two *DB pools on one database (as two server instances
// would) with many goroutines each, every write a read-check-write in Write: the row lock of
// GetSession must serialise them, so no write fails and none is lost.
func TestTwoPoolsLockedWrites(t *testing.T) {
	dsn := newSchema(t)
	storetest.TwoHandles(t, open(t, dsn), open(t, dsn), 8, 15)
}

// TestTwoPoolsConditionalUpdates races optimistic writers on two pools: each reads the session in
// a Read, then stores the next version conditionally in a Write. Losers must get EVERSION (and
// write nothing); every win moves the version by exactly one, so no update is lost.
func TestTwoPoolsConditionalUpdates(t *testing.T) {
	dsn := newSchema(t)
	dbs := []*postgres.DB{open(t, dsn), open(t, dsn)}
	s := mkSession(t, dbs[0], "sess_1")
	const goroutines, each = 8, 15
	var wins, losses atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 2*goroutines*each)
	for h, db := range dbs {
		for g := range goroutines {
			wg.Go(func() {
				for i := range each {
					var cur *carryon.Session
					if err := db.Read(t.Context(), func(tx store.Tx) error {
						var err error
						cur, err = tx.GetSession(t.Context(), "usr_1", s.ID)
						return err
					}); err != nil {
						errs <- err
						continue
					}
					prev := cur.Version
					cur.Version++
					cur.LastSeq++
					cur.MessageCount++
					cur.Title = fmt.Sprintf("h%d g%d i%d", h, g, i)
					err := db.Write(t.Context(), func(_ context.Context, tx store.Tx) error {
						// The conditional update first: a loser stops before it inserts anything.
						if err := tx.UpdateSession(t.Context(), cur, prev); err != nil {
							return err
						}
						return tx.InsertMessages(t.Context(), "usr_1", []*carryon.Message{{SessionID: s.ID, Seq: cur.LastSeq,
							Role: carryon.RoleUser, Kind: carryon.KindMessage, Content: cur.Title, Version: cur.Version, CreatedAt: now}})
					})
					switch e, _ := carryon.AsError(err); {
					case err == nil:
						wins.Add(1)
					case e != nil && e.Code == carryon.EVERSION && e.CurrentVersion > prev:
						losses.Add(1)
					default:
						errs <- fmt.Errorf("writer h%d g%d: %w", h, g, err)
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("unexpected error: %v", err)
	}
	if wins.Load() == 0 || wins.Load()+losses.Load() != 2*goroutines*each {
		t.Fatalf("%d wins and %d losses of %d writes", wins.Load(), losses.Load(), 2*goroutines*each)
	}
	checkSession(t, dbs[1], s.ID, int(wins.Load()))
	t.Logf("%d wins, %d version conflicts", wins.Load(), losses.Load())
}

// errReplay is what a racer returns when it finds the request id taken: the intended outcome for
// all but one of them.
var errReplay = errors.New("replayed")

// TestIdempotencySameKeyRace sends the same request id from 50 goroutines on two pools, each in
// the hub's pattern: look the key up, and when it is new, do the effect (append a message) and
// store the key, all in one Write. Exactly one does the effect; the others find its record, or,
// while it is still in flight, are refused with EINFLIGHT.
func TestIdempotencySameKeyRace(t *testing.T) {
	dsn := newSchema(t)
	dbs := []*postgres.DB{open(t, dsn), open(t, dsn)}
	s := mkSession(t, dbs[0], "sess_1")
	const racers = 50
	var wg sync.WaitGroup
	var done, replays, inFlight atomic.Int64
	errs := make(chan error, racers)
	for i := range racers {
		db := dbs[i%2]
		wg.Go(func() {
			err := db.Write(t.Context(), func(_ context.Context, tx store.Tx) error {
				rec, err := tx.GetIdempotency(t.Context(), "usr_1", "req_same")
				switch {
				case err == nil && rec.State == store.IdemDone:
					return errReplay
				case err == nil:
					return fmt.Errorf("record in state %q", rec.State)
				case carryon.ErrorCode(err) != carryon.ENOTFOUND:
					return err
				}
				if err := appendTurn(t.Context(), tx, s.ID, fmt.Sprintf("racer %d", i)); err != nil {
					return err
				}
				return tx.PutIdempotency(t.Context(), &store.IdempotencyRecord{OwnerID: "usr_1", Key: "req_same",
					Fingerprint: "fp", State: store.IdemDone, Result: []byte(fmt.Sprintf(`{"racer":%d}`, i)),
					CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour)})
			})
			switch {
			case err == nil:
				done.Add(1)
			case errors.Is(err, errReplay):
				replays.Add(1)
			case carryon.ErrorCode(err) == carryon.EINFLIGHT:
				inFlight.Add(1)
			default:
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("racer failed: %v", err)
	}
	if done.Load() != 1 || replays.Load()+inFlight.Load() != racers-1 {
		t.Fatalf("%d racers did the effect, %d replayed and %d were refused in flight; want 1 and %d", done.Load(), replays.Load(), inFlight.Load(), racers-1)
	}
	checkSession(t, dbs[1], s.ID, 1)

	// Plain puts of one key from many writers at once replace each other without an error.
	var wg2 sync.WaitGroup
	errs = make(chan error, racers)
	for i := range racers {
		wg2.Go(func() {
			errs <- dbs[i%2].Write(t.Context(), func(_ context.Context, tx store.Tx) error {
				return tx.PutIdempotency(t.Context(), &store.IdempotencyRecord{OwnerID: "usr_1", Key: "req_put",
					Fingerprint: fmt.Sprint(i), State: store.IdemInFlight, CreatedAt: now, ExpiresAt: now})
			})
		})
	}
	wg2.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent PutIdempotency: %v", err)
		}
	}
}

// TestWriteRetriesDeadlock makes two writers lock two sessions in opposite orders, both holding
// their first lock before either takes its second: Postgres aborts one with a deadlock, and
// Write must run it again so that both writes succeed.
func TestWriteRetriesDeadlock(t *testing.T) {
	db := open(t, newSchema(t))
	a, b := mkSession(t, db, "sess_a"), mkSession(t, db, "sess_b")
	var (
		runs    atomic.Int64
		holding sync.WaitGroup
		wg      sync.WaitGroup
	)
	holding.Add(2)
	first := [2]atomic.Bool{}
	errs := make([]error, 2)
	for i, order := range [][2]string{{a.ID, b.ID}, {b.ID, a.ID}} {
		wg.Go(func() {
			errs[i] = db.Write(t.Context(), func(_ context.Context, tx store.Tx) error {
				runs.Add(1)
				if _, err := tx.GetSession(t.Context(), "usr_1", order[0]); err != nil {
					return err
				}
				if first[i].CompareAndSwap(false, true) {
					holding.Done()
					holding.Wait()
				}
				if err := appendTurn(t.Context(), tx, order[1], fmt.Sprintf("writer %d", i)); err != nil {
					return err
				}
				return appendTurn(t.Context(), tx, order[0], fmt.Sprintf("writer %d", i))
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	if runs.Load() < 3 {
		t.Fatalf("the transaction functions ran %d times; a deadlock should have made one run again", runs.Load())
	}
	checkSession(t, db, a.ID, 2)
	checkSession(t, db, b.ID, 2)

	// Without retries the deadlock reaches the caller, as an internal error.
	noRetry := open(t, newSchema(t), postgres.WithRetries(0))
	a, b = mkSession(t, noRetry, "sess_a"), mkSession(t, noRetry, "sess_b")
	holding = sync.WaitGroup{}
	holding.Add(2)
	for i, order := range [][2]string{{a.ID, b.ID}, {b.ID, a.ID}} {
		wg.Go(func() {
			errs[i] = noRetry.Write(t.Context(), func(_ context.Context, tx store.Tx) error {
				if _, err := tx.GetSession(t.Context(), "usr_1", order[0]); err != nil {
					return err
				}
				holding.Done()
				holding.Wait()
				return appendTurn(t.Context(), tx, order[1], "x")
			})
		})
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("without retries: errors %v and %v; want exactly one deadlock", errs[0], errs[1])
	}
	if err := errors.Join(errs...); carryon.ErrorCode(err) != carryon.EINTERNAL {
		t.Fatalf("deadlock surfaced as %v, want an internal error", err)
	}
}
