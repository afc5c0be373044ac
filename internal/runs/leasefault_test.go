package runs_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model/scripted"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/store/postgres"
)

// TestLeaseNotRenewedStopsRun cuts a runner off its PostgreSQL database in the middle of a model
// call: its heartbeats fail, and before its lease ends the run is stopped (the model call is
// abandoned) without the runner recording an end. Once the database is back, another runner
// takes the run over after the lease and finishes it, once.
func TestLeaseNotRenewedStopsRun(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	proxy, via := pgtest.NewProxyFor(t, dsn)
	cutOff, err := postgres.Open(context.Background(), via, postgres.WithTxTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cutOff.Close() })
	direct, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })
	e := newHubEnv(t, direct, sessions.Config{})

	model := newBlocking()
	logs := &syncBuf{}
	first := runner(t, cutOff, sessions.New(cutOff, sessions.Config{}), e.data, model, runs.Config{
		Workers: 1, LeaseTTL: 3 * time.Second, Heartbeat: 500 * time.Millisecond, Poll: 20 * time.Millisecond,
		Instance: "cut-off", Logger: slog.New(slog.NewTextHandler(logs, nil)),
	})
	second := runner(t, direct, e.sess, e.data, scripted.New(0), runs.Config{Workers: 1, LeaseTTL: 3 * time.Second, Poll: 20 * time.Millisecond, Instance: "second"})
	stopFirst := work(t, first)
	_, run := e.startRun(t, second, "hello")
	select {
	case <-model.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the run never reached its model call")
	}
	proxy.Refuse(true)
	proxy.Cut()
	// The blocking model returns only when the runner cancels the call: that is the run stopping.
	cut := time.Now()
	waitFor(t, "the cut-off runner stops its run", func() bool {
		return strings.Contains(logs.String(), "lease not renewed before it ends") && strings.Contains(logs.String(), "run lost to another runner")
	})
	if d := time.Since(cut); d > 3*time.Second {
		t.Fatalf("the run stopped %s after the cut, after its lease of 3s ended", d)
	}
	if r := getRun(t, direct, run.ID); r.Status != carryon.RunRunning || r.Attempt != 1 {
		t.Fatalf("the cut-off runner changed the run: %s attempt %d", r.Status, r.Attempt)
	}
	proxy.Refuse(false)
	stopFirst()

	work(t, second)
	waitFor(t, "the run is taken over and finished", func() bool { return getRun(t, direct, run.ID).Status == carryon.RunSucceeded })
	if r := getRun(t, direct, run.ID); r.Attempt != 2 {
		t.Fatalf("finished at attempt %d, want 2", r.Attempt)
	}
	if n := endEvents(t, direct, run.ID); n != 1 {
		t.Fatalf("%d end events, want 1", n)
	}
}
