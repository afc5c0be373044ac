package sessions_test

import (
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/sessions"
)

// TestSweepKeepsClosedSessions: closing a session keeps its history, so the sweeper purges only
// expired sessions, however long ago a closed one was closed; a closed session goes only with a
// closed retention, that long after it was closed.
func TestSweepKeepsClosedSessions(t *testing.T) {
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
