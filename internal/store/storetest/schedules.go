package storetest

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// newSchedule returns an active schedule of session s due at next.
func newSchedule(s *carryon.Session, id string, sec int, next time.Time) *carryon.Schedule {
	return &carryon.Schedule{
		ID: id, SessionID: s.ID, OwnerID: s.OwnerID, Cron: "0 8 * * 1-5", Timezone: "Europe/Paris",
		Message: "check the inbox", Agent: "researcher", Overlap: carryon.OverlapSkip, CatchUp: carryon.CatchUpLatest,
		Status: carryon.ScheduleActive, NextFireAt: tp(next), CreatedAt: at(sec), UpdatedAt: at(sec),
	}
}

func getSchedule(t testing.TB, st store.Store, owner, id string) (*carryon.Schedule, error) {
	t.Helper()
	var sc *carryon.Schedule
	err := st.Read(t.Context(), func(tx store.Tx) error {
		var err error
		sc, err = tx.GetSchedule(t.Context(), owner, id)
		return err
	})
	return sc, err
}

func testSchedules(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("RoundTripAndOwnership", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "ses_sched", at(0))
		insertSession(t, st, s)
		want := newSchedule(s, "sch_1", 1, at(100))
		until := at(9000)
		want.Until = &until
		write(t, st, func(tx store.Tx) error { return tx.InsertSchedule(ctx, want) })
		got, err := getSchedule(t, st, ownerA, "sch_1")
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("GetSchedule = %+v, %v; want %+v", got, err, want)
		}
		_, err = getSchedule(t, st, ownerB, "sch_1")
		wantCode(t, err, carryon.ENOTFOUND)
		// Another owner's session takes no schedule; a missing one neither.
		foreign := newSchedule(s, "sch_2", 1, at(100))
		foreign.OwnerID = ownerB
		err = st.Write(ctx, func(_ context.Context, tx store.Tx) error { return tx.InsertSchedule(ctx, foreign) })
		wantCode(t, err, carryon.ENOTFOUND)

		// Every mutable field is stored; an at schedule keeps its time.
		got.Cron, got.At, got.Timezone, got.Message, got.Agent = "", tp(at(500)), "UTC", "again", ""
		got.Overlap, got.CatchUp, got.Until, got.Status = carryon.OverlapEnqueue, carryon.CatchUpNone, nil, carryon.ScheduleDone
		got.NextFireAt, got.LastTick, got.LastOutcome, got.LastRunID, got.LastError = nil, tp(at(100)), carryon.TickFailed, "run_x", "boom"
		got.Fired, got.UpdatedAt = 7, at(101)
		write(t, st, func(tx store.Tx) error { return tx.UpdateSchedule(ctx, got) })
		again, err := getSchedule(t, st, ownerA, "sch_1")
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("after UpdateSchedule = %+v, %v; want %+v", again, err, got)
		}
		got.Every, got.At = "90s", nil
		write(t, st, func(tx store.Tx) error { return tx.UpdateSchedule(ctx, got) })
		if again, _ = getSchedule(t, st, ownerA, "sch_1"); again.Every != "90s" || again.At != nil || again.Cron != "" {
			t.Fatalf("every schedule read back as %+v", again)
		}
		foreign = &carryon.Schedule{}
		*foreign = *got
		foreign.OwnerID = ownerB
		err = st.Write(ctx, func(_ context.Context, tx store.Tx) error { return tx.UpdateSchedule(ctx, foreign) })
		wantCode(t, err, carryon.ENOTFOUND)
		err = st.Write(ctx, func(_ context.Context, tx store.Tx) error { return tx.DeleteSchedule(ctx, ownerB, "sch_1") })
		wantCode(t, err, carryon.ENOTFOUND)
		write(t, st, func(tx store.Tx) error { return tx.DeleteSchedule(ctx, ownerA, "sch_1") })
		_, err = getSchedule(t, st, ownerA, "sch_1")
		wantCode(t, err, carryon.ENOTFOUND)
	})

	t.Run("ListAndDue", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s1, s2 := newSession(ownerA, "ses_one", at(0)), newSession(ownerA, "ses_two", at(0))
		other := newSession(ownerB, "ses_other", at(0))
		for _, s := range []*carryon.Session{s1, s2, other} {
			insertSession(t, st, s)
		}
		paused := newSchedule(s2, "sch_paused", 4, at(5))
		paused.Status, paused.NextFireAt = carryon.SchedulePaused, nil
		all := []*carryon.Schedule{newSchedule(s1, "sch_a", 1, at(30)), newSchedule(s1, "sch_b", 2, at(10)),
			newSchedule(s2, "sch_c", 3, at(20)), paused, newSchedule(other, "sch_z", 5, at(15))}
		write(t, st, func(tx store.Tx) error {
			for _, sc := range all {
				if err := tx.InsertSchedule(ctx, sc); err != nil {
					return err
				}
			}
			return nil
		})
		ids := func(list []*carryon.Schedule) []string {
			out := []string{}
			for _, sc := range list {
				out = append(out, sc.ID)
			}
			return out
		}
		read(t, st, func(tx store.Tx) error {
			list, err := tx.ListSchedules(ctx, ownerA, store.ScheduleQuery{})
			if got := ids(list); err != nil || !reflect.DeepEqual(got, []string{"sch_paused", "sch_c", "sch_b", "sch_a"}) {
				t.Fatalf("ListSchedules(owner) = %v, %v", got, err)
			}
			list, err = tx.ListSchedules(ctx, ownerA, store.ScheduleQuery{SessionID: "ses_one", Limit: 1})
			if got := ids(list); err != nil || !reflect.DeepEqual(got, []string{"sch_b"}) {
				t.Fatalf("ListSchedules(session, 1) = %v, %v", got, err)
			}
			list, err = tx.ListSchedules(ctx, ownerA, store.ScheduleQuery{SessionID: "ses_one", AfterCreated: list[0].CreatedAt, AfterID: "sch_b"})
			if got := ids(list); err != nil || !reflect.DeepEqual(got, []string{"sch_a"}) {
				t.Fatalf("ListSchedules(session, after) = %v, %v", got, err)
			}
			list, err = tx.ListSchedules(ctx, ownerB, store.ScheduleQuery{SessionID: "ses_one"})
			if err != nil || len(list) != 0 {
				t.Fatalf("ListSchedules of another owner's session = %v, %v", ids(list), err)
			}
			// Due: active, next fire at or before now, soonest first, across owners.
			due, err := tx.DueSchedules(ctx, at(20), 0)
			if got := ids(due); err != nil || !reflect.DeepEqual(got, []string{"sch_b", "sch_z", "sch_c"}) {
				t.Fatalf("DueSchedules(20) = %v, %v", got, err)
			}
			due, err = tx.DueSchedules(ctx, at(20), 1)
			if got := ids(due); err != nil || !reflect.DeepEqual(got, []string{"sch_b"}) {
				t.Fatalf("DueSchedules(20, 1) = %v, %v", got, err)
			}
			return nil
		})
		// A schedule is deleted with its session.
		write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, "ses_one") })
		for _, id := range []string{"sch_a", "sch_b"} {
			_, err := getSchedule(t, st, ownerA, id)
			wantCode(t, err, carryon.ENOTFOUND)
		}
		if _, err := getSchedule(t, st, ownerA, "sch_c"); err != nil {
			t.Fatalf("a schedule of another session went with it: %v", err)
		}
	})

	t.Run("ClaimsOnce", func(t *testing.T) {
		// Claimers at once each take a due schedule and move it on: every schedule is taken
		// exactly once, whether the database serialises writers or locks rows.
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "ses_claims", at(0))
		insertSession(t, st, s)
		const n = 12
		write(t, st, func(tx store.Tx) error {
			for i := range n {
				if err := tx.InsertSchedule(ctx, newSchedule(s, "sch_"+string(rune('a'+i)), i, at(i))); err != nil {
					return err
				}
			}
			return nil
		})
		var mu sync.Mutex
		claimed := map[string]int{}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					var got string
					err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
						got = ""
						due, err := tx.DueSchedules(ctx, at(100), 1)
						if err != nil || len(due) == 0 {
							return err
						}
						sc := due[0]
						sc.NextFireAt, sc.UpdatedAt = tp(at(1000)), at(100)
						got = sc.ID
						return tx.UpdateSchedule(ctx, sc)
					})
					if err != nil {
						t.Errorf("claim: %v", err)
						return
					}
					if got == "" {
						return
					}
					mu.Lock()
					claimed[got]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(claimed) != n {
			t.Fatalf("claimed %d schedules, want %d: %v", len(claimed), n, claimed)
		}
		for id, c := range claimed {
			if c != 1 {
				t.Fatalf("schedule %s claimed %d times", id, c)
			}
		}
	})
}
