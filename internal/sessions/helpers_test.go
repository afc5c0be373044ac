package sessions_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// clock is a fake clock tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

type fixture struct {
	st    store.Store
	svc   *sessions.Service
	clock *clock
	path  string
	alice context.Context
	bob   context.Context
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "carryon.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{st: st, path: path, clock: &clock{t: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}}
	f.svc = sessions.New(st, sessions.Config{Now: f.clock.Now, IdleTTL: time.Hour, PurgeAfter: 24 * time.Hour})
	f.alice = f.user(t, "usr_alice", "alice")
	f.bob = f.user(t, "usr_bob", "bob")
	return f
}

func (f *fixture) user(t *testing.T, id, name string) context.Context {
	t.Helper()
	u := &carryon.User{ID: id, Name: name, CreatedAt: f.clock.Now()}
	err := f.st.Write(context.Background(), func(_ context.Context, tx store.Tx) error { return tx.InsertUser(context.Background(), u) })
	if err != nil {
		t.Fatal(err)
	}
	return carryon.NewContextWithUser(context.Background(), u)
}

func (f *fixture) create(t *testing.T, ctx context.Context) *carryon.Session {
	t.Helper()
	s, err := f.svc.Create(ctx, carryon.NewSession{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *fixture) append(t *testing.T, ctx context.Context, id string, texts ...string) *carryon.AppendResult {
	t.Helper()
	in := carryon.AppendInput{}
	for _, s := range texts {
		in.Messages = append(in.Messages, carryon.NewMessage{Role: carryon.RoleUser, Content: s})
	}
	r, err := f.svc.AppendMessages(ctx, id, in)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := carryon.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

func texts(msgs []*carryon.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Content
	}
	return out
}
