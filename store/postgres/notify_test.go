package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/jackc/pgx/v5"
)

// TestNotifyAcrossPools sends notifications from one pool to a listener on another (as between
// two server instances), also after the listener's connection was killed.
func TestNotifyAcrossPools(t *testing.T) {
	dsn := newSchema(t)
	sender, receiver := open(t, dsn), open(t, dsn)
	n, ok := store.AsNotifier(store.Instrument(receiver, func(string, time.Duration, error) {}))
	if !ok {
		t.Fatal("the postgres store is not a store.Notifier")
	}
	got := make(chan string, 100)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- n.Listen(ctx, "carryon_test", func(p string) { got <- p }) }()

	// LISTEN takes effect some time after Listen starts: send until one arrives.
	expect := func(payload string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			if err := sender.Notify(t.Context(), "carryon_test", payload); err != nil {
				t.Fatalf("Notify: %v", err)
			}
			select {
			case p := <-got:
				if p == payload {
					return
				}
			case <-time.After(50 * time.Millisecond):
			case <-deadline:
				t.Fatalf("notification %q never arrived", payload)
			}
		}
	}
	expect("run_1")
	if err := sender.Notify(t.Context(), "other_channel", "run_x"); err != nil {
		t.Fatal(err)
	}
	expect("run_2")

	// Kill the listener's connection: Listen reconnects and delivers again.
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var killed int
	if err := conn.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = 'carryon listener'`).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminated %d listener connections (%v), want 1", killed, err)
	}
	expect("run_3")

	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Listen returned %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Listen did not return after its context ended")
	}
}

// TestRunEventNotifiesInItsTransaction: a transaction that stores events of a run tells the
// listeners of store.RunsChannel once, when it commits, and not at all when it rolls back. (On
// 9e1964c storing an event announced nothing: the run manager sent a pg_notify of its own after
// the transaction, so a crash in between left a stored event unannounced.) The driver sends one
// pg_notify a transaction and run, however many events it stores (PostgreSQL would fold the
// repeats too, after a round trip each).
func TestRunEventNotifiesInItsTransaction(t *testing.T) {
	dsn := newSchema(t)
	db, listener := open(t, dsn), open(t, dsn)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Microsecond)
	sess := &carryon.Session{ID: "sess_n", OwnerID: "usr_n", Title: "n", Status: carryon.SessionActive, Version: 1,
		CreatedAt: now, UpdatedAt: now, LastActiveAt: now, ExpiresAt: now.Add(time.Hour), IdleTTLSeconds: 3600}
	run := &carryon.Run{ID: "run_n", SessionID: sess.ID, OwnerID: sess.OwnerID, Status: carryon.RunRunning, TriggerSeq: 1,
		Multitask: carryon.MultitaskReject, CreatedAt: now, UpdatedAt: now}
	if err := db.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertUser(ctx, &carryon.User{ID: sess.OwnerID, Name: "n", CreatedAt: now}); err != nil {
			return err
		}
		if err := tx.InsertSession(ctx, sess); err != nil {
			return err
		}
		return tx.InsertRun(ctx, run)
	}); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 100)
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = listener.Listen(lctx, store.RunsChannel, func(p string) { got <- p }) }()
	// LISTEN takes effect some time after Listen starts: send a marker until one arrives.
	marker := func(payload string) []string {
		t.Helper()
		var before []string
		deadline := time.After(10 * time.Second)
		for {
			if err := db.Notify(ctx, store.RunsChannel, payload); err != nil {
				t.Fatal(err)
			}
			for wait := time.After(100 * time.Millisecond); ; {
				select {
				case p := <-got:
					if p == payload {
						return before
					}
					before = append(before, p)
					continue
				case <-wait:
				case <-deadline:
					t.Fatalf("marker %q never arrived", payload)
				}
				break
			}
		}
	}
	marker("ready")
	three := func(_ context.Context, tx store.Tx) error {
		for range 3 {
			if err := tx.AppendEvent(ctx, run.OwnerID, &carryon.Event{RunID: run.ID, Type: carryon.EventModelDelta, CreatedAt: now}); err != nil {
				return err
			}
		}
		return nil
	}
	failed := errors.New("roll back")
	if err := db.Write(ctx, func(ctx context.Context, tx store.Tx) error { _ = three(ctx, tx); return failed }); !errors.Is(err, failed) {
		t.Fatalf("the rolled back write: %v", err)
	}
	if n := marker("after rollback"); len(n) != 0 {
		t.Fatalf("a rolled back transaction announced %v", n)
	}
	if err := db.Write(ctx, three); err != nil {
		t.Fatal(err)
	}
	if n := marker("after commit"); len(n) != 1 || n[0] != run.ID {
		t.Fatalf("a transaction with three events of %s announced %v, want it once", run.ID, n)
	}
}
