package contextbuild_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// fixture is a sessions service over a SQLite file with one user.
type fixture struct {
	st    store.Store
	svc   *sessions.Service
	alice context.Context
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "carryon.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	f := &fixture{st: st, svc: sessions.New(st, sessions.Config{})}
	u := &carryon.User{ID: "usr_alice", Name: "alice"}
	if err := st.Write(context.Background(), func(_ context.Context, tx store.Tx) error { return tx.InsertUser(context.Background(), u) }); err != nil {
		tb.Fatal(err)
	}
	f.alice = carryon.NewContextWithUser(context.Background(), u)
	return f
}

func (f *fixture) session(tb testing.TB) string {
	tb.Helper()
	s, err := f.svc.Create(f.alice, carryon.NewSession{Title: "t"})
	if err != nil {
		tb.Fatal(err)
	}
	return s.ID
}

// add appends messages in one write and returns them as stored.
func (f *fixture) add(tb testing.TB, id string, msgs ...carryon.NewMessage) []*carryon.Message {
	tb.Helper()
	res, err := f.svc.AppendMessages(f.alice, id, carryon.AppendInput{Messages: msgs})
	if err != nil {
		tb.Fatal(err)
	}
	return res.Messages
}

// chat appends n alternating user and assistant messages of about size bytes each, numbered
// from first, in batches.
func (f *fixture) chat(tb testing.TB, id string, first, n, size int) {
	tb.Helper()
	var batch []carryon.NewMessage
	for i := first; i < first+n; i++ {
		role := carryon.RoleUser
		if i%2 == 1 {
			role = carryon.RoleAssistant
		}
		batch = append(batch, carryon.NewMessage{Role: role, Content: text(i, size)})
		if len(batch) == 500 {
			f.add(tb, id, batch...)
			batch = nil
		}
	}
	if len(batch) > 0 {
		f.add(tb, id, batch...)
	}
}

// text is a message of about size bytes that names its number.
func text(i, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "message %d:", i)
	words := []string{"the", "parser", "keeps", "a", "small", "table", "of", "offsets", "per", "file", "and", "reuses", "it"}
	for j := 0; b.Len() < size; j++ {
		b.WriteString(" " + words[(i+j)%len(words)])
	}
	return b.String()
}

// countingSource wraps a Source and records what it is asked.
type countingSource struct {
	inner    contextbuild.Source
	mu       sync.Mutex
	calls    int
	asked    []int
	returned int
}

func (c *countingSource) ContextSnapshot(ctx context.Context, id string, req carryon.ContextSnapshotRequest) (*carryon.ContextSnapshot, error) {
	snap, err := c.inner.ContextSnapshot(ctx, id, req)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	c.asked = append(c.asked, req.Messages)
	if snap != nil {
		c.returned += len(snap.View.Messages)
	}
	return snap, err
}

// fakeActions is a Source whose snapshots hold a fixed journal.
type fakeActions struct {
	contextbuild.Source
	acts  []*carryon.Action
	limit int
}

func (f *fakeActions) ContextSnapshot(ctx context.Context, id string, req carryon.ContextSnapshotRequest) (*carryon.ContextSnapshot, error) {
	snap, err := f.Source.ContextSnapshot(ctx, id, req)
	if err != nil {
		return nil, err
	}
	f.limit, snap.Actions = req.Actions, f.acts
	return snap, nil
}
