package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/jackc/pgx/v5"
)

// A write that makes something for a user holds the user's row (LockOwner) to its commit, so a
// forget that starts meanwhile waits for it and then finds what it made; a write after the forget
// started is refused. On SQLite writes take turns, so the same holds without a lock.
func TestLockOwnerHoldsForget(t *testing.T) {
	dsn := newSchema(t)
	db := open(t, dsn)
	ctx := t.Context()
	if err := db.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertUser(ctx, &carryon.User{ID: "usr_1", Name: "bob", CreatedAt: now})
	}); err != nil {
		t.Fatal(err)
	}
	locked, release, made := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	var once sync.Once
	let := func() { once.Do(func() { close(release) }) }
	defer let() // a failure below must not leave the write waiting
	go func() {
		made <- db.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			if err := tx.LockOwner(ctx, "usr_1"); err != nil {
				return err
			}
			close(locked)
			<-release
			return tx.InsertSession(ctx, &carryon.Session{ID: "sess_late", OwnerID: "usr_1", Status: carryon.SessionActive,
				Version: 1, CreatedAt: now, UpdatedAt: now, LastActiveAt: now, ExpiresAt: now.Add(time.Hour)})
		})
	}()
	<-locked
	marked := make(chan error, 1)
	go func() {
		marked <- db.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			_, err := tx.MarkForgetting(ctx, "usr_1", now)
			return err
		})
	}()
	// The forget's mark waits for the lock: PostgreSQL shows its backend waiting on one.
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var waiting int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query LIKE 'UPDATE users SET name%'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting == 1 {
			break
		}
		select {
		case err := <-marked:
			t.Fatalf("the forget's mark did not wait for the write holding the user: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the forget's mark is not waiting on a lock")
		}
		time.Sleep(5 * time.Millisecond) // polling an observable condition, not synchronising
	}
	let()
	if err := <-made; err != nil {
		t.Fatalf("the write that held the user: %v", err)
	}
	if err := <-marked; err != nil {
		t.Fatalf("the forget's mark: %v", err)
	}
	err = db.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.LockOwner(ctx, "usr_1"); carryon.ErrorCode(err) != carryon.EUNAUTHORIZED {
			t.Errorf("LockOwner after the mark: %v, want %s", err, carryon.EUNAUTHORIZED)
		}
		left, err := tx.ForgetSessions(ctx, "usr_1", 10)
		if err != nil || len(left) != 1 {
			t.Errorf("the forget finds %v (%v), want the session made before it", left, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
