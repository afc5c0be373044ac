package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/carryon-hub/carryon/internal/store"
	"github.com/jackc/pgx/v5"
)

var _ store.Notifier = (*DB)(nil)

// listenerAppName is the application_name of the connections Listen holds, so an operator can
// tell them apart in pg_stat_activity.
const listenerAppName = "carryon listener"

// Notify sends payload to every listener of channel, in any process connected to the database
// (pg_notify). Postgres delivers a notification when the sending transaction commits, here at
// once; payloads are limited to 8000 bytes.
func (db *DB) Notify(ctx context.Context, channel, payload string) error {
	if _, err := db.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, payload); err != nil {
		return fmt.Errorf("postgres: notify %s: %w", channel, err)
	}
	return nil
}

// Listen calls fn for every payload sent to channel until ctx is done, and returns ctx's error.
// It holds a connection of its own (not one of the pool's) and reconnects, with a growing pause,
// after the connection fails; notifications sent while it is reconnecting are lost, so once it
// listens again it calls fn(store.Resubscribed) for the caller to catch up from the store. fn runs
// on Listen's goroutine: a slow fn delays the next notification.
func (db *DB) Listen(ctx context.Context, channel string, fn func(payload string)) error {
	pause := 50 * time.Millisecond
	listened := false
	for {
		// It returns when the connection failed (then reconnect after a pause) or ctx is done.
		_ = db.listenOnce(ctx, channel, fn, func() {
			pause = 50 * time.Millisecond
			if listened {
				fn(store.Resubscribed)
			}
			listened = true
		})
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return ctx.Err()
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// listenOnce connects, listens on channel and delivers notifications until the connection fails
// or ctx is done; listening calls onListen once LISTEN has taken effect.
func (db *DB) listenOnce(ctx context.Context, channel string, fn func(string), onListen func()) error {
	cfg := db.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = listenerAppName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return err
	}
	onListen()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return errors.Join(ctx.Err(), err)
			}
			return err
		}
		if n.Channel == channel {
			fn(n.Payload)
		}
	}
}
