package app_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/app"
	"github.com/carryon-hub/carryon/internal/dbopen"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/poll"
)

// TestIdleServerCommitsNothing: once its work is done, a hub with runners, the sessions' and the
// long-term memory's sweepers (every 50 ms here, 400 sweeps) and a session with a finished run
// commits no write transaction in 20 s, on both stores: every poll reads first and writes only
// when it finds work. (On 9e1964c the runners' poll wrote twice a second and each sweep twice.)
func TestIdleServerCommitsNothing(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("idles for 20 s")
	}
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			ended := &logWatch{line: []byte(`msg="run ended"`)}
			opt := app.Options{Data: t.TempDir(), SweepInterval: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(ended, nil))}
			if db == "postgres" {
				st, err := dbopen.Open(t.Context(), opt.Data, pgtest.NewDatabase(t), 0, "")
				if err != nil {
					t.Fatal(err)
				}
				opt.Store = st
			}
			var writes atomic.Int64
			opt.Instrument = func(kind string, _ time.Duration, err error) {
				if kind == "write" && err == nil {
					writes.Add(1)
				}
			}
			h, err := app.Open(t.Context(), opt)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			u, _, err := h.Users.CreateUser(carryon.NewTrustedContext(t.Context()), carryon.NewUser{Name: "idle"})
			if err != nil {
				t.Fatal(err)
			}
			as := carryon.NewContextWithUser(t.Context(), u)
			sess, err := h.Sessions.Create(as, carryon.NewSession{})
			if err != nil {
				t.Fatal(err)
			}
			run, err := h.Runs.Start(as, sess.ID, carryon.NewRun{Message: "hello"})
			if err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(as, time.Minute)
			defer cancel()
			if got, err := h.Runs.Wait(wctx, run.ID); err != nil || got.Status != carryon.RunSucceeded {
				t.Fatalf("run: %+v %v", got, err)
			}
			// The run's end is visible before its write returns to the runner (and to the
			// counter): the runner logs it once that write has returned.
			poll.Eventually(t, "the runner to log the run's end", ended.seen.Load)
			before := writes.Load()
			idle := time.NewTimer(20 * time.Second)
			defer idle.Stop()
			<-idle.C // the measured window itself: nothing happens in it by design
			if n := writes.Load() - before; n != 0 {
				t.Fatalf("the idle server committed %d write transactions in 20 s", n)
			}
		})
	}
}

// logWatch is a log that notes whether a line with line was written.
type logWatch struct {
	line []byte
	seen atomic.Bool
}

func (l *logWatch) Write(p []byte) (int, error) {
	if bytes.Contains(p, l.line) {
		l.seen.Store(true)
	}
	return len(p), nil
}
