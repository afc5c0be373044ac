package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/store/postgres"
	"github.com/jackc/pgx/v5"
)

// applyOnce is one client request with a request id, as the idempotency layer makes it: in one
// write, it returns the user an earlier attempt made, or makes a new user and records it under
// key. A fault may fail it after it committed; retrying it must not make a second user.
func applyOnce(ctx context.Context, db store.Store, key string, attempt int) error {
	return db.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.GetIdempotency(ctx, "usr_fault", key); err == nil {
			return nil
		} else if carryon.ErrorCode(err) != carryon.ENOTFOUND {
			return err
		}
		at := time.Now().UTC().Truncate(time.Microsecond)
		id := fmt.Sprintf("usr_%s_%d", key, attempt)
		if err := tx.InsertUser(ctx, &carryon.User{ID: id, Name: id, CreatedAt: at}); err != nil {
			return err
		}
		return tx.PutIdempotency(ctx, &store.IdempotencyRecord{OwnerID: "usr_fault", Key: key, Fingerprint: "fp",
			State: store.IdemDone, Result: []byte(`"` + id + `"`), CreatedAt: at, ExpiresAt: at.Add(time.Hour)})
	})
}

// faultWriters runs n writers of keys k<writer>_<i>, each retrying a request until it succeeds;
// every failure must be EUNAVAILABLE (or EINFLIGHT, see below). It returns the count of unavailable answers seen and a
// function that stops the writers and returns the first unexpected error.
func faultWriters(t *testing.T, db store.Store, n int) (applied, unavailable *atomic.Int64, stop func() error) {
	t.Helper()
	applied, unavailable = new(atomic.Int64), new(atomic.Int64)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for w := range n {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				key := fmt.Sprintf("k%d_%d", w, i)
				for attempt := 0; ; attempt++ {
					err := applyOnce(ctx, db, key, attempt)
					if err == nil {
						applied.Add(1)
						break
					}
					if ctx.Err() != nil {
						return
					}
					// An attempt cut off mid-transaction may still hold its request id on the
					// server until the server notices the dead connection: the retry is told
					// request_in_flight, which a client retries as well.
					inFlight := carryon.ErrorCode(err) == carryon.EINFLIGHT
					if !inFlight && (!errors.Is(err, store.ErrUnavailable) || carryon.ErrorCode(err) != carryon.EUNAVAILABLE) {
						mu.Lock()
						first = errors.Join(first, fmt.Errorf("%s attempt %d: %w", key, attempt, err))
						mu.Unlock()
						return
					}
					if !inFlight {
						unavailable.Add(1)
					}
					select { // a client's pause before it retries
					case <-ctx.Done():
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			}
		})
	}
	return applied, unavailable, func() error {
		cancel()
		wg.Wait()
		return first
	}
}

// checkOnce verifies that every recorded request made exactly one user: no request applied twice.
func checkOnce(t *testing.T, dsn string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var keys, users, orphans int
	if err := conn.QueryRow(t.Context(), `SELECT
		(SELECT count(*) FROM idempotency WHERE owner_id = 'usr_fault'),
		(SELECT count(*) FROM users),
		(SELECT count(*) FROM users u WHERE NOT EXISTS (
			SELECT 1 FROM idempotency i WHERE i.owner_id = 'usr_fault' AND convert_from(i.result, 'UTF8') = '"' || u.id || '"'))`,
	).Scan(&keys, &users, &orphans); err != nil {
		t.Fatal(err)
	}
	if keys == 0 || users != keys || orphans != 0 {
		t.Fatalf("%d requests recorded, %d users made, %d made by no recorded request: a request was applied twice or lost", keys, users, orphans)
	}
}

// TestFaultRestart cuts every connection and refuses new ones for a while, as a restarting
// server does, under 8 writers: they get EUNAVAILABLE (and nothing else), Ping says unavailable,
// the pool reconnects when the server is back, and no request is applied twice.
func TestFaultRestart(t *testing.T) {
	dsn := newSchema(t)
	proxy, via := pgtest.NewProxyFor(t, dsn)
	db := open(t, via)
	applied, unavailable, stop := faultWriters(t, db, 8)
	poll.Eventually(t, "writes before the fault", func() bool { return applied.Load() >= 50 })

	proxy.Refuse(true)
	proxy.Cut()
	poll.Eventually(t, "writers see the database unavailable", func() bool { return unavailable.Load() >= 8 })
	if err := db.Ping(t.Context()); carryon.ErrorCode(err) != carryon.EUNAVAILABLE {
		t.Fatalf("Ping while the server is down: %v, want unavailable", err)
	}
	if e, _ := carryon.AsError(db.Ping(t.Context())); e == nil || e.RetryAfterSeconds < 1 {
		t.Fatalf("no Retry-After on the unavailable error: %+v", e)
	}
	during := applied.Load()

	proxy.Refuse(false)
	poll.Eventually(t, "writes after the server is back", func() bool { return applied.Load() >= during+50 })
	if err := db.Ping(t.Context()); err != nil {
		t.Fatalf("Ping after recovery: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	checkOnce(t, dsn)
}

// TestFaultCutRepeatedly cuts the connections many times under load, without refusing new
// ones: commits and acknowledgements are lost mid-flight, and each retry still applies once.
func TestFaultCutRepeatedly(t *testing.T) {
	dsn := newSchema(t)
	proxy, via := pgtest.NewProxyFor(t, dsn)
	db := open(t, via)
	applied, unavailable, stop := faultWriters(t, db, 8)
	for range 20 {
		before := applied.Load()
		poll.Eventually(t, "writes between cuts", func() bool { return applied.Load() >= before+10 })
		proxy.Cut()
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if unavailable.Load() == 0 {
		t.Fatal("no write failed while its connection was cut")
	}
	checkOnce(t, dsn)
}

// TestFaultStall stops every byte between the pool and the server while keeping the
// connections up: a write gives up after the transaction timeout with EUNAVAILABLE (not a hang),
// and once the bytes flow again the pool works.
func TestFaultStall(t *testing.T) {
	dsn := newSchema(t)
	proxy, via := pgtest.NewProxyFor(t, dsn)
	db := open(t, via, postgres.WithTxTimeout(time.Second))
	if err := applyOnce(t.Context(), db, "before", 0); err != nil {
		t.Fatal(err)
	}
	proxy.Stall()
	start := time.Now()
	err := applyOnce(t.Context(), db, "stalled", 0)
	if carryon.ErrorCode(err) != carryon.EUNAVAILABLE || !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("write on a stalled connection: %v, want unavailable", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the stalled write took %s to give up", d)
	}
	if err := db.Read(t.Context(), func(tx store.Tx) error { _, err := tx.GetUser(t.Context(), "usr_before_0"); return err }); carryon.ErrorCode(err) != carryon.EUNAVAILABLE {
		t.Fatalf("read on a stalled connection: %v, want unavailable", err)
	}
	pctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if err := db.Ping(pctx); err == nil {
		t.Fatal("Ping answered through a stalled connection")
	}
	proxy.Resume()
	poll.Eventually(t, "a write after the stall", func() bool {
		err := applyOnce(t.Context(), db, "stalled", 1)
		return err == nil
	})
	checkOnce(t, dsn)
}

// TestFaultAdminShutdown terminates the pool's backends on the server (what a fast shutdown or
// a failover manager's demotion does, SQLSTATE 57P01): the next transactions are EUNAVAILABLE or
// succeed on a fresh connection, never an internal error.
func TestFaultAdminShutdown(t *testing.T) {
	dsn := newSchema(t)
	const app = "carryon fault test"
	db := open(t, dsn+"&application_name="+url.QueryEscape(app))
	applied, _, stop := faultWriters(t, db, 4)
	admin, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(t.Context())
	for range 5 {
		before := applied.Load()
		poll.Eventually(t, "writes between terminations", func() bool { return applied.Load() >= before+20 })
		if _, err := admin.Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, app); err != nil {
			t.Fatal(err)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	checkOnce(t, dsn)
}

// TestFaultListenResubscribes cuts the listener's connection: Listen reconnects, says so with
// store.Resubscribed (what was sent meanwhile is lost, and the caller catches up from the store),
// and delivers the notifications sent after.
func TestFaultListenResubscribes(t *testing.T) {
	dsn := newSchema(t)
	proxy, via := pgtest.NewProxyFor(t, dsn)
	sender, receiver := open(t, dsn), open(t, via)
	got := make(chan string, 1000)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- receiver.Listen(ctx, "carryon_fault", func(p string) { got <- p }) }()
	defer func() { cancel(); <-done }()

	// received sends payload until it arrives, and reports whether Resubscribed came first.
	received := func(payload string) (resubscribed bool) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			if err := sender.Notify(t.Context(), "carryon_fault", payload); err != nil {
				t.Fatal(err)
			}
			for {
				select {
				case p := <-got:
					if p == store.Resubscribed {
						resubscribed = true
						continue
					}
					if p == payload {
						return resubscribed
					}
					continue
				case <-tick.C:
				case <-deadline:
					t.Fatalf("notification %q never arrived", payload)
				}
				break
			}
		}
	}
	if received("before") {
		t.Fatal("Resubscribed before any connection was lost")
	}
	for i := range 3 {
		proxy.Cut()
		if !received(fmt.Sprintf("after cut %d", i)) {
			t.Fatalf("no Resubscribed after cut %d", i)
		}
	}
}
