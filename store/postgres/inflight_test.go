package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/store"
	"github.com/carryon-hub/carryon/store/postgres"
)

// TestKeyInFlight: a write whose request id another transaction holds waits at most the key wait,
// then is refused with EINFLIGHT; once the first commits, the key is free again.
func TestKeyInFlight(t *testing.T) {
	dsn := newDatabase(t)
	first := open(t, dsn)
	second := open(t, dsn, postgres.WithKeyWait(200*time.Millisecond))
	holding, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- first.Write(context.Background(), func(tx store.Tx) error {
			if _, err := tx.GetIdempotency(context.Background(), "usr_a", "k"); carryon.ErrorCode(err) != carryon.ENOTFOUND {
				return err
			}
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	start := time.Now()
	err := second.Write(context.Background(), func(tx store.Tx) error {
		_, err := tx.GetIdempotency(context.Background(), "usr_a", "k")
		return err
	})
	if carryon.ErrorCode(err) != carryon.EINFLIGHT {
		t.Fatalf("second writer: %v, want request_in_flight", err)
	}
	if e, _ := carryon.AsError(err); e.RetryAfterSeconds < 1 {
		t.Fatalf("no Retry-After: %+v", e)
	}
	if waited := time.Since(start); waited < 150*time.Millisecond || waited > 5*time.Second {
		t.Fatalf("waited %v for the key", waited)
	}
	// Another owner's same key is not held.
	err = second.Write(context.Background(), func(tx store.Tx) error {
		_, err := tx.GetIdempotency(context.Background(), "usr_b", "k")
		if carryon.ErrorCode(err) == carryon.ENOTFOUND {
			return nil
		}
		return err
	})
	if err != nil {
		t.Fatalf("another owner's key: %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	err = second.Write(context.Background(), func(tx store.Tx) error {
		_, err := tx.GetIdempotency(context.Background(), "usr_a", "k")
		if carryon.ErrorCode(err) == carryon.ENOTFOUND {
			return nil
		}
		return err
	})
	if err != nil {
		t.Fatalf("after the first committed: %v", err)
	}
}
