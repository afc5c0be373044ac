package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/store/postgres"
	"github.com/jackc/pgx/v5"
)

// holdKey starts a write that reads (and so locks) owner usr_a's request id key, stores its
// record and then waits for release before it commits. It returns once the key is held, with
// the channel the write's result arrives on.
func holdKey(t *testing.T, db *postgres.DB, key string, release <-chan struct{}) <-chan error {
	t.Helper()
	holding, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- db.Write(context.Background(), func(_ context.Context, tx store.Tx) error {
			if _, err := tx.GetIdempotency(context.Background(), "usr_a", key); carryon.ErrorCode(err) != carryon.ENOTFOUND {
				return fmt.Errorf("first read of the key: %v", err)
			}
			err := tx.PutIdempotency(context.Background(), &store.IdempotencyRecord{OwnerID: "usr_a", Key: key,
				Fingerprint: "fp", State: store.IdemDone, Result: []byte(`{"first":true}`), CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
			close(holding)
			if err != nil {
				return err
			}
			<-release
			return nil
		})
	}()
	select {
	case <-holding:
	case err := <-done:
		t.Fatalf("the first write ended before it held the key: %v", err)
	}
	return done
}

// readKey reads owner's request id key in a write, as a repeat of the request does.
func readKey(db *postgres.DB, owner, key string) (*store.IdempotencyRecord, error) {
	var rec *store.IdempotencyRecord
	err := db.Write(context.Background(), func(_ context.Context, tx store.Tx) error {
		var err error
		rec, err = tx.GetIdempotency(context.Background(), owner, key)
		return err
	})
	return rec, err
}

// TestKeyInFlight: a write whose request id another transaction holds is refused with
// EINFLIGHT and Retry-After; another owner's same key is free; once the first commits, a repeat
// reads its record.
func TestKeyInFlight(t *testing.T) {
	dsn := newSchema(t)
	first, second := open(t, dsn), open(t, dsn)
	release := make(chan struct{})
	done := holdKey(t, first, "k", release)
	_, err := readKey(second, "usr_a", "k")
	if carryon.ErrorCode(err) != carryon.EINFLIGHT {
		t.Fatalf("second writer: %v, want request_in_flight", err)
	}
	if e, _ := carryon.AsError(err); e.RetryAfterSeconds < 1 {
		t.Fatalf("no Retry-After: %+v", e)
	}
	if _, err := readKey(second, "usr_b", "k"); carryon.ErrorCode(err) != carryon.ENOTFOUND {
		t.Fatalf("another owner's key: %v, want not_found", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rec, err := readKey(second, "usr_a", "k"); err != nil || string(rec.Result) != `{"first":true}` {
		t.Fatalf("after the first committed: %+v, %v", rec, err)
	}
}

// TestKeyInFlightHoldsNoConnection: many repeats of a request still in flight, sent at once
// through a pool of two connections, all get EINFLIGHT while the first still holds the key,
// and no repeat ever waits on the key's lock (which would hold a pooled connection while the
// first runs); the pool still serves other writes.
func TestKeyInFlightHoldsNoConnection(t *testing.T) {
	dsn := newSchema(t)
	first, small := open(t, dsn), open(t, dsn, postgres.WithMaxConns(2))
	monitor, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer monitor.Close(context.Background())
	release := make(chan struct{})
	var once sync.Once
	stop := func() { once.Do(func() { close(release) }) }
	defer stop()
	done := holdKey(t, first, "k", release)

	const repeats = 20
	results := make(chan error, repeats)
	for range repeats {
		go func() {
			_, err := readKey(small, "usr_a", "k")
			results <- err
		}()
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for got := 0; got < repeats; {
		select {
		case err := <-results:
			got++
			if carryon.ErrorCode(err) != carryon.EINFLIGHT {
				t.Errorf("repeat %d: %v, want request_in_flight", got, err)
			}
		case <-tick.C:
			var waiting int
			if err := monitor.QueryRow(t.Context(), `SELECT count(*) FROM pg_locks
				WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
			if waiting > 0 {
				stop() // let the waiters go, so that the test ends
				t.Fatalf("%d repeats wait on the key's lock, each holding a pooled connection", waiting)
			}
		}
	}
	// The first still holds its key, and the small pool still serves another request.
	if _, err := readKey(small, "usr_a", "other"); carryon.ErrorCode(err) != carryon.ENOTFOUND {
		t.Fatalf("another key through the small pool: %v, want not_found", err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
