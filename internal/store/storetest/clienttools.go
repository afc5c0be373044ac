package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// testActiveRunCounts: the runs in each active state across owners; finished runs are not counted.
func testActiveRunCounts(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	a := newSession(ownerA, "sess_a", at(0))
	b := newSession(ownerB, "sess_b", at(0))
	insertSession(t, st, a)
	insertSession(t, st, b)
	for _, r := range []*carryon.Run{
		newRun(a, "run_a_wait", carryon.RunWaitingApproval, 1), newRun(b, "run_b_wait", carryon.RunWaitingApproval, 2),
		newRun(a, "run_a_queued", carryon.RunQueued, 3), newRun(b, "run_b_outputs", carryon.RunRequiresAction, 4),
		newRun(a, "run_a_done", carryon.RunSucceeded, 5), newRun(b, "run_b_failed", carryon.RunFailed, 6),
	} {
		insertRun(t, st, r)
	}
	var got map[carryon.RunStatus]int64
	read(t, st, func(tx store.Tx) error {
		var err error
		got, err = tx.ActiveRunCounts(t.Context())
		return err
	})
	want := map[carryon.RunStatus]int64{carryon.RunWaitingApproval: 2, carryon.RunQueued: 1, carryon.RunRequiresAction: 1}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ActiveRunCounts = %v, want %v", got, want)
	}
}

// testStaleRequiresAction: the runs that waited for tool outputs since before a time, across
// owners and oldest first, and no other run.
func testStaleRequiresAction(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	a := newSession(ownerA, "sess_a", at(0))
	b := newSession(ownerB, "sess_b", at(0))
	insertSession(t, st, a)
	insertSession(t, st, b)
	for _, r := range []*carryon.Run{
		newRun(a, "run_a_old", carryon.RunRequiresAction, 10), newRun(b, "run_b_old", carryon.RunRequiresAction, 5),
		newRun(a, "run_a_new", carryon.RunRequiresAction, 30), newRun(b, "run_b_waiting", carryon.RunWaitingApproval, 1),
		newRun(a, "run_a_queued", carryon.RunQueued, 1),
	} {
		insertRun(t, st, r)
	}
	stale := func(before time.Time, limit int) []string {
		var got []*carryon.Run
		read(t, st, func(tx store.Tx) error {
			var err error
			got, err = tx.StaleRequiresAction(t.Context(), before, limit)
			return err
		})
		return runIDs(got)
	}
	if got, want := stale(at(20), 0), []string{"run_b_old", "run_a_old"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("StaleRequiresAction(20) = %v, want %v (across owners, oldest first)", got, want)
	}
	if got, want := stale(at(20), 1), []string{"run_b_old"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("StaleRequiresAction(20, limit 1) = %v, want %v", got, want)
	}
	if got := stale(at(5), 0); len(got) != 0 {
		t.Fatalf("StaleRequiresAction(5) = %v; a run updated exactly then is not stale", got)
	}
}
