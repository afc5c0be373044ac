package schedules_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/app"
	"github.com/carryon-hub/carryon/internal/dbopen"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/store"
)

// TestOneRunPerTick: an every-minute schedule fires one run at each tick and none between
// ticks or on a second look at the same tick; the run carries the tick's request id and
// journals schedule.fired.
func TestOneRunPerTick(t *testing.T) {
	t.Parallel()
	clk := newClock()
	h := openHub(t, nil, clk, false)
	as := user(t, h, "alice")
	s := session(t, h, as)
	start := clk.Now()
	sc, err := h.Schedules.Create(as, s.ID, carryon.NewSchedule{Every: "1m", Message: "check the inbox"})
	if err != nil {
		t.Fatal(err)
	}
	if want := start.Add(time.Minute); sc.NextFireAt == nil || !sc.NextFireAt.Equal(want) || sc.Status != carryon.ScheduleActive {
		t.Fatalf("created %+v, want active, next fire at %s", sc, want)
	}
	clk.Add(30 * time.Second)
	if n := tick(t, h); n != 0 {
		t.Fatalf("fired %d before the tick", n)
	}
	for i := 1; i <= 3; i++ {
		clk.Set(start.Add(time.Duration(i) * time.Minute))
		if n := tick(t, h); n != 1 {
			t.Fatalf("tick %d fired %d runs, want 1", i, n)
		}
		if n := tick(t, h); n != 0 {
			t.Fatalf("tick %d fired again: %d", i, n)
		}
		settled(t, h, as, s.ID)
	}
	rs := runs(t, h, as, s.ID)
	if len(rs) != 3 {
		t.Fatalf("%d runs, want 3", len(rs))
	}
	for i, r := range rs {
		tk := start.Add(time.Duration(3-i) * time.Minute)
		if want := "schedule:" + sc.ID + ":"; !strings.HasPrefix(r.RequestID, want) || r.Message != "check the inbox" || r.Status != carryon.RunSucceeded {
			t.Fatalf("run %d = %+v", i, r)
		}
		if r.RequestID != "schedule:"+sc.ID+":"+itoa(tk.UnixMicro()) {
			t.Fatalf("run %d request id %q, want the tick %s", i, r.RequestID, tk)
		}
	}
	evs, err := h.Runs.Events(as, rs[0].ID, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer evs.Close()
	found := false
	for {
		ev, ok, err := evs.Next()
		if err != nil || !ok {
			break
		}
		if ev.Type == "schedule.fired" && strings.Contains(string(ev.Data), sc.ID) {
			found = true
		}
		if ev.Type == carryon.EventRunFinished {
			break
		}
	}
	if !found {
		t.Fatal("no schedule.fired event in the run's journal")
	}
	got := get(t, h, as, sc.ID)
	if got.Fired != 3 || got.LastOutcome != carryon.TickFired || got.LastRunID != rs[0].ID || !got.NextFireAt.Equal(start.Add(4*time.Minute)) {
		t.Fatalf("after three ticks: %+v", got)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestCatchUp: after missed ticks, the latest of them 2.5 minutes late, catch_up none starts nothing and latest starts one run
// for the latest missed tick; both move on to the next tick after now (never a burst).
func TestCatchUp(t *testing.T) {
	t.Parallel()
	clk := newClock()
	h := openHub(t, nil, clk, false)
	as := user(t, h, "alice")
	start := clk.Now()
	none, latest := session(t, h, as), session(t, h, as)
	scNone, err := h.Schedules.Create(as, none.ID, carryon.NewSchedule{Cron: "*/10 * * * *", Message: "none", CatchUp: carryon.CatchUpNone})
	if err != nil {
		t.Fatal(err)
	}
	scLatest, err := h.Schedules.Create(as, latest.ID, carryon.NewSchedule{Cron: "*/10 * * * *", Message: "latest", CatchUp: carryon.CatchUpLatest})
	if err != nil {
		t.Fatal(err)
	}
	clk.Set(start.Add(32*time.Minute + 30*time.Second)) // down past the ticks at :10, :20 and :30
	if n := tick(t, h); n != 1 {
		t.Fatalf("after downtime %d runs started, want 1 (latest only)", n)
	}
	settled(t, h, as, latest.ID)
	if rs := runs(t, h, as, none.ID); len(rs) != 0 {
		t.Fatalf("catch_up none started %d runs", len(rs))
	}
	rs := runs(t, h, as, latest.ID)
	wantTick := start.Add(30 * time.Minute)
	if len(rs) != 1 || rs[0].RequestID != "schedule:"+scLatest.ID+":"+itoa(wantTick.UnixMicro()) {
		t.Fatalf("catch_up latest runs = %+v, want one for the tick %s", rs, wantTick)
	}
	next := start.Add(40 * time.Minute)
	for _, c := range []struct {
		id, outcome string
	}{{scNone.ID, carryon.TickMissed}, {scLatest.ID, carryon.TickFired}} {
		got := get(t, h, as, c.id)
		if got.LastOutcome != c.outcome || !got.NextFireAt.Equal(next) || !got.LastTick.Equal(wantTick) {
			t.Fatalf("schedule %s after downtime: %+v, want %s, next %s", c.id, got, c.outcome, next)
		}
	}
	if n := tick(t, h); n != 0 {
		t.Fatalf("a second look fired %d", n)
	}
}

// TestOverlap: with no runner here, a tick's run stays queued. skip skips the next tick while
// it is active; enqueue queues behind another run, but never behind its own queued run.
func TestOverlap(t *testing.T) {
	t.Parallel()
	clk := newClock()
	h := openHub(t, nil, clk, true)
	as := user(t, h, "alice")
	start := clk.Now()
	skip, enq := session(t, h, as), session(t, h, as)
	scSkip, err := h.Schedules.Create(as, skip.ID, carryon.NewSchedule{Every: "1m", Message: "skip"})
	if err != nil {
		t.Fatal(err)
	}
	scEnq, err := h.Schedules.Create(as, enq.ID, carryon.NewSchedule{Every: "1m", Message: "enqueue", Overlap: carryon.OverlapEnqueue})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Runs.Start(as, enq.ID, carryon.NewRun{Message: "by hand"}); err != nil {
		t.Fatal(err)
	}
	clk.Set(start.Add(time.Minute))
	if n := tick(t, h); n != 2 {
		t.Fatalf("first tick fired %d, want 2 (skip on an idle session, enqueue behind the run by hand)", n)
	}
	clk.Set(start.Add(2 * time.Minute))
	if n := tick(t, h); n != 0 {
		t.Fatalf("second tick fired %d, want 0", n)
	}
	if got := get(t, h, as, scSkip.ID); got.LastOutcome != carryon.TickSkipOverlap || got.Fired != 1 {
		t.Fatalf("skip schedule: %+v", got)
	}
	if got := get(t, h, as, scEnq.ID); got.LastOutcome != carryon.TickSkipQueued || got.Fired != 1 {
		t.Fatalf("enqueue schedule: %+v", got)
	}
	if n := len(runs(t, h, as, enq.ID)); n != 2 {
		t.Fatalf("enqueue session has %d runs, want 2", n)
	}
	// Run now follows the overlap policy: skip is busy, enqueue queues.
	if _, err := h.Schedules.RunNow(as, scSkip.ID, carryon.RetryOptions{}); carryon.ErrorCode(err) != carryon.EBUSY {
		t.Fatalf("run now on a busy skip schedule: %v, want %s", err, carryon.EBUSY)
	}
	if r, err := h.Schedules.RunNow(as, scEnq.ID, carryon.RetryOptions{RequestID: "now-1"}); err != nil || r.Status != carryon.RunQueued {
		t.Fatalf("run now on enqueue: %+v, %v", r, err)
	}
}

// TestRepeatedTickStartsNothing: a tick claimed again (its next fire time put back, as a
// transaction that committed but whose answer was lost might leave it to a retry) finds its
// request id taken and starts no second run.
func TestRepeatedTickStartsNothing(t *testing.T) {
	t.Parallel()
	clk := newClock()
	h := openHub(t, nil, clk, true)
	as := user(t, h, "alice")
	s := session(t, h, as)
	sc, err := h.Schedules.Create(as, s.ID, carryon.NewSchedule{Every: "1m", Message: "once", Overlap: carryon.OverlapEnqueue})
	if err != nil {
		t.Fatal(err)
	}
	tk := *sc.NextFireAt
	clk.Set(tk)
	if n := tick(t, h); n != 1 {
		t.Fatalf("fired %d", n)
	}
	first := get(t, h, as, sc.ID)
	err = h.Store.Write(t.Context(), func(ctx context.Context, tx store.Tx) error {
		row, err := tx.GetSchedule(ctx, first.OwnerID, sc.ID)
		if err != nil {
			return err
		}
		row.NextFireAt = &tk
		return tx.UpdateSchedule(ctx, row)
	})
	if err != nil {
		t.Fatal(err)
	}
	tick(t, h)
	rs := runs(t, h, as, s.ID)
	if len(rs) != 1 {
		t.Fatalf("the repeated tick made %d runs, want 1", len(rs))
	}
	if got := get(t, h, as, sc.ID); got.LastRunID != rs[0].ID {
		t.Fatalf("the repeat names run %s, want %s", got.LastRunID, rs[0].ID)
	}
}

// TestClosedSessionAndOneShot: a closed session's ticks start nothing; an at schedule fires
// once and is done.
func TestClosedSessionAndOneShot(t *testing.T) {
	t.Parallel()
	clk := newClock()
	h := openHub(t, nil, clk, false)
	as := user(t, h, "alice")
	start := clk.Now()
	closed, once := session(t, h, as), session(t, h, as)
	scClosed, err := h.Schedules.Create(as, closed.ID, carryon.NewSchedule{Every: "1m", Message: "x"})
	if err != nil {
		t.Fatal(err)
	}
	at := start.Add(90 * time.Second)
	scOnce, err := h.Schedules.Create(as, once.ID, carryon.NewSchedule{At: &at, Message: "once"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Sessions.Close(as, closed.ID, carryon.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	clk.Set(start.Add(2 * time.Minute))
	if n := tick(t, h); n != 1 {
		t.Fatalf("fired %d, want 1 (the at)", n)
	}
	if got := get(t, h, as, scClosed.ID); got.LastOutcome != carryon.TickSessionClosed || got.Status != carryon.ScheduleActive {
		t.Fatalf("closed session's schedule: %+v", got)
	}
	if got := get(t, h, as, scOnce.ID); got.Status != carryon.ScheduleDone || got.NextFireAt != nil || got.Fired != 1 {
		t.Fatalf("at schedule after firing: %+v", got)
	}
	settled(t, h, as, once.ID)
	clk.Add(time.Hour)
	if n := tick(t, h); n != 0 {
		t.Fatalf("fired %d after the at", n)
	}
}

// TestThreeInstancesOnePostgres: three hubs on one PostgreSQL database, their schedulers
// claiming at once at every tick of one clock: each tick starts exactly one run.
func TestThreeInstancesOnePostgres(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	clk := newClock()
	var hubs []*app.Hub
	for range 3 {
		db, err := dbopen.Open(t.Context(), t.TempDir(), dsn, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		hubs = append(hubs, openHub(t, db, clk, false))
	}
	as := user(t, hubs[0], "alice")
	var sessions []*carryon.Session
	var scheds []*carryon.Schedule
	for i := range 3 {
		s := session(t, hubs[i], as)
		sc, err := hubs[i].Schedules.Create(as, s.ID, carryon.NewSchedule{Cron: "* * * * *", Message: "tick", Overlap: carryon.OverlapEnqueue})
		if err != nil {
			t.Fatal(err)
		}
		sessions, scheds = append(sessions, s), append(scheds, sc)
	}
	start := *scheds[0].NextFireAt
	const ticks = 5
	for i := range ticks {
		clk.Set(start.Add(time.Duration(i)*time.Minute + 500*time.Millisecond))
		var wg sync.WaitGroup
		fired := make([]int, len(hubs))
		for j, h := range hubs {
			wg.Go(func() {
				for range 3 { // each instance looks more than once
					n, err := h.Schedules.Tick(t.Context())
					if err != nil {
						t.Error(err)
					}
					fired[j] += n
				}
			})
		}
		wg.Wait()
		if total := fired[0] + fired[1] + fired[2]; total != len(scheds) {
			t.Fatalf("tick %d: the instances started %v runs, want %d in all (one per schedule)", i, fired, len(scheds))
		}
		for _, s := range sessions {
			settled(t, hubs[0], as, s.ID)
		}
	}
	for k, s := range sessions {
		rs := runs(t, hubs[0], as, s.ID)
		if len(rs) != ticks {
			t.Fatalf("session %d: %d runs over %d ticks", k, len(rs), ticks)
		}
		seen := map[string]bool{}
		for _, r := range rs {
			if seen[r.RequestID] || !strings.HasPrefix(r.RequestID, "schedule:"+scheds[k].ID+":") {
				t.Fatalf("session %d: run %+v repeats or names another schedule", k, r)
			}
			seen[r.RequestID] = true
		}
	}
}

// TestForgottenUserLeavesNoSchedule: forgetting a user deletes its schedules with its sessions,
// and the scheduler has nothing left to fire.
func TestForgottenUserLeavesNoSchedule(t *testing.T) {
	t.Parallel()
	clk := newClock()
	h := openHub(t, nil, clk, true)
	as := user(t, h, "alice")
	s := session(t, h, as)
	sc, err := h.Schedules.Create(as, s.ID, carryon.NewSchedule{Every: "1m", Message: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Users.ForgetUser(carryon.NewTrustedContext(t.Context()), carryon.UserIDFromContext(as)); err != nil {
		t.Fatal(err)
	}
	err = h.Store.Read(t.Context(), func(tx store.Tx) error {
		due, err := tx.DueSchedules(t.Context(), sc.NextFireAt.Add(time.Hour), 0)
		if err == nil && len(due) != 0 {
			t.Errorf("schedules left after forgetting their owner: %+v", due[0])
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	clk.Set(sc.NextFireAt.Add(time.Minute))
	if n := tick(t, h); n != 0 {
		t.Fatalf("fired %d for a forgotten user", n)
	}
}
