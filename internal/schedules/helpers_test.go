package schedules_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/app"
	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// clock is a test clock the schedules read; tests move it.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock {
	// An hour boundary near the real time, so that sessions (whose clock is the real one) are
	// neither expired nor in the future.
	return &clock{now: time.Now().UTC().Truncate(time.Hour).Add(time.Hour)}
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

func (c *clock) Add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// openHub opens a hub on st (nil: a SQLite file) whose schedules read clk and whose scheduler
// does not run on its own: the test calls Tick.
func openHub(t *testing.T, st store.Store, clk *clock, noWorkers bool) *app.Hub {
	t.Helper()
	data := t.TempDir()
	if st == nil {
		var err error
		if st, err = sqlite.Open(t.Context(), filepath.Join(data, "carryon.db")); err != nil {
			t.Fatal(err)
		}
	}
	h, err := app.Open(t.Context(), app.Options{Data: data, Store: st, NoScheduler: true, NoWorkers: noWorkers, Now: clk.Now,
		ScheduleMinInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// user creates a user and returns a context acting for it.
func user(t *testing.T, h *app.Hub, name string) context.Context {
	t.Helper()
	u, _, err := h.Users.CreateUser(carryon.NewTrustedContext(t.Context()), carryon.NewUser{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return carryon.NewContextWithUser(t.Context(), u)
}

func session(t *testing.T, h *app.Hub, as context.Context) *carryon.Session {
	t.Helper()
	s, err := h.Sessions.Create(as, carryon.NewSession{Title: "scheduled"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func tick(t *testing.T, h *app.Hub) int {
	t.Helper()
	n, err := h.Schedules.Tick(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// runs returns the session's runs, newest first.
func runs(t *testing.T, h *app.Hub, as context.Context, sessionID string) []*carryon.Run {
	t.Helper()
	page, err := h.Runs.ListRuns(as, sessionID, carryon.RunFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return page.Items
}

// settled waits until the session has no active run.
func settled(t *testing.T, h *app.Hub, as context.Context, sessionID string) {
	t.Helper()
	poll.Eventually(t, "the session's runs to end", func() bool {
		for _, r := range runs(t, h, as, sessionID) {
			if r.Status.Active() {
				return false
			}
		}
		return true
	})
}

func get(t *testing.T, h *app.Hub, as context.Context, id string) *carryon.Schedule {
	t.Helper()
	sc, err := h.Schedules.Get(as, id)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}
