package sessions_test

import (
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/sessions"
)

// TestSweepKeepsClosedSessions: closing a session keeps its history, so the sweeper purges only
// expired sessions, however long ago a closed one was closed; a closed session goes only with a
// closed retention, that long after it was closed.
func TestSweepKeepsClosedSessions(t *testing.T) {
	t.Parallel()
	f := newFixture(t) // idle TTL 1h, purge horizon 24h
	closed := f.create(t, f.alice)
	f.append(t, f.alice, closed.ID, "keep me")
	if _, err := f.svc.Close(f.alice, closed.ID, carryon.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	expired := f.create(t, f.alice)
	f.append(t, f.alice, expired.ID, "idle")

	f.clock.Add(30 * 24 * time.Hour) // far past idle TTL + purge horizon of both
	res, err := f.svc.Sweep(f.alice)
	if err != nil || res.Sessions != 1 {
		t.Fatalf("sweep = %+v, %v; want the expired session only", res, err)
	}
	_, err = f.svc.Get(f.alice, expired.ID, carryon.GetOptions{})
	wantCode(t, err, carryon.ENOTFOUND)
	v, err := f.svc.Get(f.alice, closed.ID, carryon.GetOptions{})
	if err != nil || v.Status != carryon.SessionClosed || len(v.Messages) != 1 || v.Messages[0].Content != "keep me" {
		t.Fatalf("the closed session after the sweep: %v %+v", err, v)
	}

	// With a closed retention, a closed session goes that long after it was closed, not before.
	kept := sessions.New(f.st, sessions.Config{Now: f.clock.Now, IdleTTL: time.Hour, PurgeAfter: 24 * time.Hour,
		ClosedRetention: 45 * 24 * time.Hour})
	late := f.create(t, f.alice)
	if _, err := f.svc.Close(f.alice, late.ID, carryon.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(15*24*time.Hour + time.Second) // closed.ID: 45 days and a second; late: 15 days
	res, err = kept.Sweep(f.alice)
	if err != nil || res.Sessions != 1 {
		t.Fatalf("sweep with retention = %+v, %v; want the session closed 45 days ago only", res, err)
	}
	_, err = kept.Get(f.alice, closed.ID, carryon.GetOptions{})
	wantCode(t, err, carryon.ENOTFOUND)
	if _, err := kept.Get(f.alice, late.ID, carryon.GetOptions{}); err != nil {
		t.Fatalf("a session closed 15 days ago was purged with a 45-day retention: %v", err)
	}
}

// TestDeleteForgetsRequestIDs: deleting or purging a session forgets the request ids of its
// writes, so a repeat is not answered with the deleted content: it fails as any request to a
// missing session does. A repeat of the delete itself is still answered as the first one was.
func TestDeleteForgetsRequestIDs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	appendOnce := func(id, key, text string) (*carryon.AppendResult, error) {
		return f.svc.AppendMessages(f.alice, id, carryon.AppendInput{
			Messages:     []carryon.NewMessage{{Role: carryon.RoleUser, Content: text}},
			WriteOptions: carryon.WriteOptions{RequestID: key},
		})
	}
	s, err := f.svc.Create(f.alice, carryon.NewSession{Title: "secret plans", WriteOptions: carryon.WriteOptions{RequestID: "create-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := appendOnce(s.ID, "append-1", "the secret"); err != nil {
		t.Fatal(err)
	}
	fork, err := f.svc.Fork(f.alice, s.ID, carryon.ForkInput{WriteOptions: carryon.WriteOptions{RequestID: "fork-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Delete(f.alice, s.ID, carryon.WriteOptions{RequestID: "delete-1"}); err != nil {
		t.Fatal(err)
	}
	_, err = appendOnce(s.ID, "append-1", "the secret")
	wantCode(t, err, carryon.ENOTFOUND)
	// The create's id went with its session: a repeat makes a new one, not the deleted one.
	again, err := f.svc.Create(f.alice, carryon.NewSession{Title: "secret plans", WriteOptions: carryon.WriteOptions{RequestID: "create-1"}})
	if err != nil || again.ID == s.ID {
		t.Fatalf("repeat of the create: %v %+v", err, again)
	}
	// The fork is alive, and its id belongs to it, not to the deleted parent.
	if f2, err := f.svc.Fork(f.alice, s.ID, carryon.ForkInput{WriteOptions: carryon.WriteOptions{RequestID: "fork-1"}}); err != nil || f2.ID != fork.ID {
		t.Fatalf("repeat of the fork: %v %+v, want %s", err, f2, fork.ID)
	}
	if err := f.svc.Delete(f.alice, s.ID, carryon.WriteOptions{RequestID: "delete-1"}); err != nil {
		t.Fatalf("repeat of the delete: %v", err)
	}

	// Purged by the sweeper: the same, with request ids kept longer than the purge horizon.
	f.svc = sessions.New(f.st, sessions.Config{Now: f.clock.Now, IdleTTL: time.Hour, PurgeAfter: 24 * time.Hour,
		IdempotencyTTL: 72 * time.Hour})
	if _, err := appendOnce(fork.ID, "append-2", "more"); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Delete(f.alice, again.ID, carryon.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(time.Hour + 24*time.Hour + time.Second) // the fork expired 24h ago; append-2 has not
	if res, err := f.svc.Sweep(f.alice); err != nil || res.Sessions != 1 {
		t.Fatalf("sweep = %+v, %v", res, err)
	}
	_, err = appendOnce(fork.ID, "append-2", "more")
	wantCode(t, err, carryon.ENOTFOUND)
}

// TestSweepMaxSessionsPerUser: with a limit, the sweeper deletes each user's least recently
// active sessions beyond it (an old session used again is kept), and leaves users within it be.
func TestSweepMaxSessionsPerUser(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	svc := sessions.New(f.st, sessions.Config{Now: f.clock.Now, IdleTTL: 24 * time.Hour, MaxSessionsPerUser: 2})
	var ids []string
	for range 4 {
		ids = append(ids, f.create(t, f.alice).ID)
		f.clock.Add(time.Minute)
	}
	f.append(t, f.alice, ids[0], "still in use") // the oldest is the most recently active now
	bobs := f.create(t, f.bob)
	res, err := svc.Sweep(f.alice)
	if err != nil || res.OverLimit != 2 || res.Sessions != 0 {
		t.Fatalf("sweep = %+v, %v; want 2 over the limit", res, err)
	}
	for i, want := range []string{"", carryon.ENOTFOUND, carryon.ENOTFOUND, ""} {
		_, err := svc.Get(f.alice, ids[i], carryon.GetOptions{})
		if carryon.ErrorCode(err) != want && !(want == "" && err == nil) {
			t.Fatalf("session %d after the sweep: %v, want %q", i, err, want)
		}
	}
	if _, err := svc.Get(f.bob, bobs.ID, carryon.GetOptions{}); err != nil {
		t.Fatalf("bob's only session: %v", err)
	}
	if res, err := svc.Sweep(f.alice); err != nil || res.OverLimit != 0 {
		t.Fatalf("second sweep = %+v, %v", res, err)
	}
}
