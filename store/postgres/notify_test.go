package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/store"
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
