package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// tp returns a pointer to t, for the optional times of runs and actions.
func tp(t time.Time) *time.Time { return &t }

// newRun returns a run of session s with the given status, created at sec.
func newRun(s *carryon.Session, id string, status carryon.RunStatus, sec int) *carryon.Run {
	return &carryon.Run{
		ID: id, SessionID: s.ID, OwnerID: s.OwnerID, Status: status, TriggerSeq: 1, Model: "scripted",
		Multitask: carryon.MultitaskReject, CreatedAt: at(sec), UpdatedAt: at(sec),
		Agent: "researcher", AgentDigest: "sha256:0a1b", Door: carryon.DoorAGUI, CompactThreshold: 4000,
	}
}

// insertRun stores r.
func insertRun(t testing.TB, st store.Store, r *carryon.Run) {
	t.Helper()
	write(t, st, func(tx store.Tx) error { return tx.InsertRun(t.Context(), r) })
}

// getRun reads the owner's run.
func getRun(t testing.TB, st store.Store, owner, id string) *carryon.Run {
	t.Helper()
	var r *carryon.Run
	read(t, st, func(tx store.Tx) error {
		var err error
		r, err = tx.GetRun(t.Context(), owner, id)
		return err
	})
	return r
}

// checkRun fails the test unless got holds every field of want.
func checkRun(t testing.TB, got, want *carryon.Run) {
	t.Helper()
	if err := diffRun(got, want); err != nil {
		t.Fatalf("run %s: %v", want.ID, err)
	}
}

func diffRun(got, want *carryon.Run) error {
	if err := diffTimes(map[string][2]*time.Time{
		"CreatedAt": {&got.CreatedAt, &want.CreatedAt}, "UpdatedAt": {&got.UpdatedAt, &want.UpdatedAt},
		"LeaseExpiresAt": {got.LeaseExpiresAt, want.LeaseExpiresAt},
		"StartedAt":      {got.StartedAt, want.StartedAt}, "FinishedAt": {got.FinishedAt, want.FinishedAt},
	}); err != nil {
		return err
	}
	g, w := *got, *want
	g.CreatedAt, g.UpdatedAt, g.LeaseExpiresAt, g.StartedAt, g.FinishedAt = time.Time{}, time.Time{}, nil, nil, nil
	w.CreatedAt, w.UpdatedAt, w.LeaseExpiresAt, w.StartedAt, w.FinishedAt = time.Time{}, time.Time{}, nil, nil, nil
	if !reflect.DeepEqual(g, w) {
		return fmt.Errorf("\n got %+v\nwant %+v", g, w)
	}
	return nil
}

// diffTimes compares optional times by instant: both nil, or both set and equal.
func diffTimes(ts map[string][2]*time.Time) error {
	for name, p := range ts {
		got, want := p[0], p[1]
		if (got == nil) != (want == nil) || (got != nil && !got.Equal(*want)) {
			return fmt.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	return nil
}

func runIDs(rs []*carryon.Run) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func testRuns(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("InsertGet", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "sess_1", at(0))
		insertSession(t, st, s)
		full := newRun(s, "run_full", carryon.RunRunning, 1)
		full.RequestID, full.Multitask, full.Step, full.Attempt = "req_1", carryon.MultitaskEnqueue, 3, 2
		full.LeaseOwner, full.LeaseExpiresAt, full.StopRequested = "runner-1", tp(at(30)), "cancel"
		full.Reply, full.Error, full.Usage = "the answer", "an error", carryon.Usage{InputTokens: 120, OutputTokens: 45}
		full.UpdatedAt, full.StartedAt, full.FinishedAt = at(5), tp(at(2)), tp(at(4))
		full.Tools = []carryon.ClientTool{
			{Name: "get_weather", Description: "the weather in a city", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
			{Name: "ping"},
		}
		insertRun(t, st, full)
		checkRun(t, getRun(t, st, ownerA, full.ID), full)
		bare := newRun(s, "run_bare", carryon.RunQueued, 2)
		bare.Model, bare.Multitask, bare.TriggerSeq, bare.Agent, bare.AgentDigest, bare.Door, bare.CompactThreshold = "", "", 0, "", "", "", 0
		insertRun(t, st, bare)
		checkRun(t, getRun(t, st, ownerA, bare.ID), bare)

		read(t, st, func(tx store.Tx) error {
			_, err := tx.GetRun(ctx, ownerB, full.ID)
			wantCode(t, err, carryon.ENOTFOUND)
			_, err = tx.GetRun(ctx, ownerA, "run_missing")
			wantCode(t, err, carryon.ENOTFOUND)
			return nil
		})
		// A run goes only into a session of its owner.
		foreign := newRun(s, "run_foreign", carryon.RunQueued, 3)
		foreign.OwnerID = ownerB
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertRun(ctx, foreign) })
		wantCode(t, err, carryon.ENOTFOUND)
		orphan := newRun(&carryon.Session{ID: "sess_missing", OwnerID: ownerA}, "run_orphan", carryon.RunQueued, 3)
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertRun(ctx, orphan) })
		wantCode(t, err, carryon.ENOTFOUND)
		// The id is taken for everyone.
		other := newSession(ownerB, "sess_b", at(0))
		insertSession(t, st, other)
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.InsertRun(ctx, newRun(other, full.ID, carryon.RunQueued, 4))
		})
		wantCode(t, err, carryon.ECONFLICT)
		checkRun(t, getRun(t, st, ownerA, full.ID), full)
		read(t, st, func(tx store.Tx) error {
			for _, id := range []string{foreign.ID, orphan.ID} {
				_, err := tx.GetRun(ctx, ownerB, id)
				wantCode(t, err, carryon.ENOTFOUND)
			}
			return nil
		})
	})

	t.Run("UpdateFencing", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "sess_1", at(0))
		insertSession(t, st, s)
		r := newRun(s, "run_1", carryon.RunQueued, 1)
		insertRun(t, st, r)

		// A runner claims attempt 1.
		claimed := *r
		claimed.Status, claimed.Attempt, claimed.Step = carryon.RunRunning, 1, 1
		claimed.LeaseOwner, claimed.LeaseExpiresAt, claimed.StartedAt, claimed.UpdatedAt = "runner-1", tp(at(40)), tp(at(10)), at(10)
		claimed.Model, claimed.AgentDigest = "llama3.1", "sha256:2c3d" // the definition the runner runs with
		write(t, st, func(tx store.Tx) error { return tx.UpdateRun(ctx, &claimed, 0) })
		checkRun(t, getRun(t, st, ownerA, r.ID), &claimed)

		// Every mutable field is stored; clearing the optional ones stores NULL.
		done := claimed
		done.Status, done.Step, done.StopRequested = carryon.RunSucceeded, 4, "interrupt"
		done.LeaseOwner, done.LeaseExpiresAt = "", nil
		done.Reply, done.Error, done.Usage = "reply", "warning", carryon.Usage{InputTokens: 7, OutputTokens: 9}
		done.UpdatedAt, done.FinishedAt = at(20), tp(at(20))
		write(t, st, func(tx store.Tx) error { return tx.UpdateRun(ctx, &done, 1) })
		checkRun(t, getRun(t, st, ownerA, r.ID), &done)
		undone := done
		undone.StartedAt, undone.FinishedAt = nil, nil
		write(t, st, func(tx store.Tx) error { return tx.UpdateRun(ctx, &undone, 1) })
		checkRun(t, getRun(t, st, ownerA, r.ID), &undone)

		// A write of an older attempt is refused and writes nothing, in the same transaction either.
		stale := undone
		stale.Status, stale.Reply, stale.Attempt = carryon.RunFailed, "zombie", 1
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			if err := tx.AppendEvent(ctx, ownerA, &carryon.Event{RunID: r.ID, Type: carryon.EventRunFailed, CreatedAt: at(30)}); err != nil {
				return err
			}
			return tx.UpdateRun(ctx, &stale, 0)
		})
		wantCode(t, err, carryon.EFENCED)
		checkRun(t, getRun(t, st, ownerA, r.ID), &undone)
		read(t, st, func(tx store.Tx) error {
			evs, err := tx.EventsAfter(ctx, ownerA, r.ID, 0, 10)
			if err != nil || len(evs) != 0 {
				t.Fatalf("a fenced write left %d events (%v)", len(evs), err)
			}
			return nil
		})
		// A newer attempt than the stored one is stale too: only the exact attempt writes.
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.UpdateRun(ctx, &stale, 2) })
		wantCode(t, err, carryon.EFENCED)

		foreign := undone
		foreign.OwnerID = ownerB
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.UpdateRun(ctx, &foreign, 1) })
		wantCode(t, err, carryon.ENOTFOUND)
		missing := undone
		missing.ID = "run_missing"
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.UpdateRun(ctx, &missing, 1) })
		wantCode(t, err, carryon.ENOTFOUND)
		checkRun(t, getRun(t, st, ownerA, r.ID), &undone)
	})

	// Two runners read the run at attempt N and claim it with UpdateRun(prev = N): exactly one
	// wins; the other gets EFENCED and its whole transaction writes nothing.
	t.Run("ClaimRace", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "sess_1", at(0))
		insertSession(t, st, s)
		r := newRun(s, "run_1", carryon.RunQueued, 1)
		insertRun(t, st, r)
		for round := range 10 {
			var (
				ready, start, done sync.WaitGroup
				errs               [2]error
				seen               [2]int
			)
			ready.Add(2)
			start.Add(1)
			for i := range 2 {
				done.Go(func() {
					var cur *carryon.Run
					err := st.Read(ctx, func(tx store.Tx) error {
						var err error
						cur, err = tx.GetRun(ctx, ownerA, r.ID)
						return err
					})
					ready.Done()
					if err != nil {
						errs[i] = err
						return
					}
					start.Wait()
					prev := cur.Attempt
					seen[i] = prev
					cur.Attempt++
					cur.Status, cur.LeaseOwner, cur.LeaseExpiresAt = carryon.RunRunning, fmt.Sprintf("runner-%d", i), tp(at(100+round))
					errs[i] = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
						if err := tx.AppendEvent(ctx, ownerA, &carryon.Event{RunID: r.ID, Type: carryon.EventRunStarted,
							Data: []byte(fmt.Sprintf(`{"runner":%d}`, i)), CreatedAt: at(100 + round)}); err != nil {
							return err
						}
						return tx.UpdateRun(ctx, cur, prev)
					})
				})
			}
			ready.Wait()
			start.Done()
			done.Wait()
			if seen[0] != seen[1] {
				t.Fatalf("round %d: runners read attempts %d and %d", round, seen[0], seen[1])
			}
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner < 0:
					winner = i
				case err == nil:
					t.Fatalf("round %d: both runners claimed attempt %d", round, seen[0])
				default:
					wantCode(t, err, carryon.EFENCED)
				}
			}
			if winner < 0 {
				t.Fatalf("round %d: no runner won", round)
			}
			got := getRun(t, st, ownerA, r.ID)
			if want := fmt.Sprintf("runner-%d", winner); got.Attempt != seen[0]+1 || got.LeaseOwner != want {
				t.Fatalf("round %d: run at attempt %d held by %q, want %d %q", round, got.Attempt, got.LeaseOwner, seen[0]+1, want)
			}
			read(t, st, func(tx store.Tx) error {
				evs, err := tx.EventsAfter(ctx, ownerA, r.ID, 0, 0)
				if err != nil {
					return err
				}
				if len(evs) != round+1 || !jsonEqual(evs[round].Data, []byte(fmt.Sprintf(`{"runner":%d}`, winner))) {
					t.Fatalf("round %d: %d events, last %s; want %d, the winner's", round, len(evs), evs[len(evs)-1].Data, round+1)
				}
				return nil
			})
		}
	})

	t.Run("ListPaging", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "sess_1", at(0))
		insertSession(t, st, s)
		other := newSession(ownerA, "sess_2", at(0))
		insertSession(t, st, other)
		// Two runs share a CreatedAt: the id breaks the tie, descending.
		for _, c := range []struct {
			id  string
			sec int
		}{{"run_a", 1}, {"run_b", 5}, {"run_c", 3}, {"run_d", 5}, {"run_e", 2}, {"run_f", 4}} {
			insertRun(t, st, newRun(s, c.id, carryon.RunSucceeded, c.sec))
		}
		insertRun(t, st, newRun(other, "run_z", carryon.RunQueued, 9))
		want := []string{"run_d", "run_b", "run_f", "run_c", "run_e", "run_a"}
		var all []*carryon.Run
		read(t, st, func(tx store.Tx) error {
			var err error
			all, err = tx.ListRuns(ctx, ownerA, s.ID, store.RunQuery{})
			return err
		})
		if got := runIDs(all); !reflect.DeepEqual(got, want) {
			t.Fatalf("ListRuns = %v, want %v", got, want)
		}
		checkRun(t, all[0], getRun(t, st, ownerA, "run_d"))
		for _, limit := range []int{1, 2, 4} {
			var paged []string
			q := store.RunQuery{Limit: limit}
			for range 10 {
				var page []*carryon.Run
				read(t, st, func(tx store.Tx) error {
					var err error
					page, err = tx.ListRuns(ctx, ownerA, s.ID, q)
					return err
				})
				if len(page) > limit {
					t.Fatalf("page of %d runs, limit %d", len(page), limit)
				}
				if len(page) == 0 {
					break
				}
				paged = append(paged, runIDs(page)...)
				last := page[len(page)-1]
				q.AfterCreated, q.AfterID = last.CreatedAt, last.ID
			}
			if !reflect.DeepEqual(paged, want) {
				t.Fatalf("paged by %d = %v, want %v", limit, paged, want)
			}
		}
		read(t, st, func(tx store.Tx) error {
			_, err := tx.ListRuns(ctx, ownerB, s.ID, store.RunQuery{})
			wantCode(t, err, carryon.ENOTFOUND)
			_, err = tx.ListRuns(ctx, ownerA, "sess_missing", store.RunQuery{})
			wantCode(t, err, carryon.ENOTFOUND)
			return nil
		})
	})

	t.Run("ActiveRuns", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "sess_1", at(0))
		insertSession(t, st, s)
		other := newSession(ownerA, "sess_2", at(0))
		insertSession(t, st, other)
		for _, c := range []struct {
			id     string
			status carryon.RunStatus
			sec    int
		}{
			{"run_done", carryon.RunSucceeded, 1}, {"run_q2", carryon.RunQueued, 6}, {"run_failed", carryon.RunFailed, 2},
			{"run_wait", carryon.RunWaitingApproval, 3}, {"run_q1b", carryon.RunQueued, 5}, {"run_q1a", carryon.RunQueued, 5},
			{"run_cancelled", carryon.RunCancelled, 7}, {"run_interrupted", carryon.RunInterrupted, 8},
			{"run_running", carryon.RunRunning, 4}, {"run_outputs", carryon.RunRequiresAction, 4},
		} {
			insertRun(t, st, newRun(s, c.id, c.status, c.sec))
		}
		insertRun(t, st, newRun(other, "run_other", carryon.RunQueued, 0))
		read(t, st, func(tx store.Tx) error {
			got, err := tx.ActiveRuns(ctx, ownerA, s.ID)
			if err != nil {
				return err
			}
			if want := []string{"run_wait", "run_outputs", "run_running", "run_q1a", "run_q1b", "run_q2"}; !reflect.DeepEqual(runIDs(got), want) {
				t.Fatalf("ActiveRuns = %v, want %v", runIDs(got), want)
			}
			checkRun(t, got[0], newRun(s, "run_wait", carryon.RunWaitingApproval, 3))
			_, err = tx.ActiveRuns(ctx, ownerB, s.ID)
			wantCode(t, err, carryon.ENOTFOUND)
			_, err = tx.ActiveRuns(ctx, ownerA, "sess_missing")
			wantCode(t, err, carryon.ENOTFOUND)
			return nil
		})
		// Finishing a run takes it out.
		r := getRun(t, st, ownerA, "run_running")
		r.Status = carryon.RunSucceeded
		write(t, st, func(tx store.Tx) error { return tx.UpdateRun(ctx, r, r.Attempt) })
		read(t, st, func(tx store.Tx) error {
			got, err := tx.ActiveRuns(ctx, ownerA, s.ID)
			if want := []string{"run_wait", "run_outputs", "run_q1a", "run_q1b", "run_q2"}; err != nil || !reflect.DeepEqual(runIDs(got), want) {
				t.Fatalf("ActiveRuns = %v, %v; want %v", runIDs(got), err, want)
			}
			return nil
		})
	})

	t.Run("Runnable", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		mk := func(owner, id string) *carryon.Session {
			s := newSession(owner, id, at(0))
			insertSession(t, st, s)
			return s
		}
		run := func(s *carryon.Session, id string, status carryon.RunStatus, sec int, lease *time.Time) {
			r := newRun(s, id, status, sec)
			if status == carryon.RunRunning {
				r.Attempt, r.LeaseOwner, r.LeaseExpiresAt = 1, "runner", lease
			}
			insertRun(t, st, r)
		}
		// Idle session: its oldest queued run only (ties by id); finished runs do not hold it.
		idle := mk(ownerA, "sess_idle")
		run(idle, "run_idle_done", carryon.RunSucceeded, 1, nil)
		run(idle, "run_idle_q3", carryon.RunQueued, 12, nil)
		run(idle, "run_idle_q2", carryon.RunQueued, 11, nil)
		run(idle, "run_idle_q1", carryon.RunQueued, 11, nil)
		// A session of the other owner, idle too; its run ties with the first one by time.
		other := mk(ownerB, "sess_other")
		run(other, "run_other_q", carryon.RunQueued, 11, nil)
		// Busy: a running run with a live lease holds its session.
		busy := mk(ownerA, "sess_busy")
		run(busy, "run_busy_running", carryon.RunRunning, 2, tp(at(100)))
		run(busy, "run_busy_q", carryon.RunQueued, 3, nil)
		// Waiting for approval holds its session too.
		waiting := mk(ownerB, "sess_waiting")
		run(waiting, "run_waiting", carryon.RunWaitingApproval, 4, nil)
		run(waiting, "run_waiting_q", carryon.RunQueued, 5, nil)
		// So does waiting for a client's tool outputs.
		outputs := mk(ownerA, "sess_outputs")
		run(outputs, "run_outputs", carryon.RunRequiresAction, 4, nil)
		run(outputs, "run_outputs_q", carryon.RunQueued, 5, nil)
		// A running run whose lease expired is runnable, and still holds its session.
		lapsed := mk(ownerB, "sess_lapsed")
		run(lapsed, "run_lapsed", carryon.RunRunning, 6, tp(at(40)))
		run(lapsed, "run_lapsed_q", carryon.RunQueued, 7, nil)
		// A lease that expires exactly at now is not expired yet; a running run without a lease
		// expiry is never taken over.
		edge := mk(ownerA, "sess_edge")
		run(edge, "run_edge", carryon.RunRunning, 8, tp(at(50)))
		unleased := mk(ownerA, "sess_unleased")
		run(unleased, "run_unleased", carryon.RunRunning, 9, nil)
		run(unleased, "run_unleased_q", carryon.RunQueued, 10, nil)

		runnable := func(now time.Time, limit int) []string {
			var got []*carryon.Run
			read(t, st, func(tx store.Tx) error {
				var err error
				got, err = tx.RunnableRuns(ctx, now, limit)
				return err
			})
			return runIDs(got)
		}
		want := []string{"run_lapsed", "run_idle_q1", "run_other_q"}
		if got := runnable(at(50), 0); !reflect.DeepEqual(got, want) {
			t.Fatalf("RunnableRuns(50) = %v, want %v", got, want)
		}
		if got := runnable(at(50), 2); !reflect.DeepEqual(got, want[:2]) {
			t.Fatalf("RunnableRuns(50, limit 2) = %v, want %v", got, want[:2])
		}
		want = []string{"run_idle_q1", "run_other_q"}
		if got := runnable(at(30), 100); !reflect.DeepEqual(got, want) {
			t.Fatalf("RunnableRuns(30) = %v, want %v", got, want)
		}
		want = []string{"run_busy_running", "run_lapsed", "run_edge", "run_idle_q1", "run_other_q"}
		if got := runnable(at(101), 100); !reflect.DeepEqual(got, want) {
			t.Fatalf("RunnableRuns(101) = %v, want %v", got, want)
		}
		// The returned run is the whole row, owner included, so a runner can claim it.
		var first []*carryon.Run
		read(t, st, func(tx store.Tx) error {
			var err error
			first, err = tx.RunnableRuns(ctx, at(50), 1)
			return err
		})
		if len(first) != 1 {
			t.Fatalf("RunnableRuns(50, limit 1) = %v", runIDs(first))
		}
		checkRun(t, first[0], getRun(t, st, ownerB, "run_lapsed"))

		// Once the oldest queued run starts, its session is busy; once it ends, the next is runnable.
		r := getRun(t, st, ownerA, "run_idle_q1")
		r.Status, r.Attempt, r.LeaseExpiresAt = carryon.RunRunning, 1, tp(at(200))
		write(t, st, func(tx store.Tx) error { return tx.UpdateRun(ctx, r, 0) })
		if got, want := runnable(at(50), 0), []string{"run_lapsed", "run_other_q"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("RunnableRuns with the idle session busy = %v, want %v", got, want)
		}
		r.Status, r.LeaseExpiresAt = carryon.RunSucceeded, nil
		write(t, st, func(tx store.Tx) error { return tx.UpdateRun(ctx, r, 1) })
		if got, want := runnable(at(50), 0), []string{"run_lapsed", "run_idle_q2", "run_other_q"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("RunnableRuns after the first ended = %v, want %v", got, want)
		}
	})

	t.Run("StaleRequiresAction", func(t *testing.T) { testStaleRequiresAction(t, open) })
	t.Run("ActiveRunCounts", func(t *testing.T) { testActiveRunCounts(t, open) })

	t.Run("DeleteSession", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "sess_1", at(0))
		insertSession(t, st, s)
		appendMessages(t, st, s, "one", "two")
		keep := newSession(ownerA, "sess_keep", at(0))
		insertSession(t, st, keep)
		fillRun := func(sess *carryon.Session, id string) {
			t.Helper()
			insertRun(t, st, newRun(sess, id, carryon.RunRunning, 1))
			write(t, st, func(tx store.Tx) error {
				if err := tx.InsertAction(ctx, ownerA, newAction(id, sess.ID, 1, 0, 2)); err != nil {
					return err
				}
				return tx.AppendEvent(ctx, ownerA, &carryon.Event{RunID: id, Type: carryon.EventRunStarted, CreatedAt: at(1)})
			})
		}
		fillRun(s, "run_1")
		fillRun(keep, "run_keep")
		// A fork has runs of its own, which outlive its parent.
		f := fork(t, st, s, "sess_fork", 2, 3)
		fillRun(f, "run_fork")

		write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, s.ID) })
		read(t, st, func(tx store.Tx) error {
			_, err := tx.GetRun(ctx, ownerA, "run_1")
			wantCode(t, err, carryon.ENOTFOUND)
			_, err = tx.ListActions(ctx, ownerA, "run_1")
			wantCode(t, err, carryon.ENOTFOUND)
			_, err = tx.EventsAfter(ctx, ownerA, "run_1", 0, 10)
			wantCode(t, err, carryon.ENOTFOUND)
			return nil
		})
		// The same ids start empty: nothing of the old session is left behind.
		insertSession(t, st, newSession(ownerA, s.ID, at(50)))
		insertRun(t, st, newRun(s, "run_1", carryon.RunQueued, 50))
		write(t, st, func(tx store.Tx) error {
			return tx.InsertAction(ctx, ownerA, newAction("run_1", s.ID, 1, 0, 51))
		})
		read(t, st, func(tx store.Tx) error {
			evs, err := tx.EventsAfter(ctx, ownerA, "run_1", 0, 10)
			if err != nil || len(evs) != 0 {
				t.Fatalf("events of a deleted run survived: %d, %v", len(evs), err)
			}
			acts, err := tx.RecentActions(ctx, ownerA, s.ID, 10)
			if err != nil || len(acts) != 1 || !acts[0].StartedAt.Equal(at(51)) {
				t.Fatalf("actions of a deleted session survived: %v, %v", actionIDs(acts), err)
			}
			// The other session and the fork keep everything.
			for _, c := range []struct{ sess, run string }{{keep.ID, "run_keep"}, {f.ID, "run_fork"}} {
				runs, err := tx.ListRuns(ctx, ownerA, c.sess, store.RunQuery{})
				if err != nil || !reflect.DeepEqual(runIDs(runs), []string{c.run}) {
					t.Fatalf("runs of %s = %v, %v", c.sess, runIDs(runs), err)
				}
				acts, err := tx.ListActions(ctx, ownerA, c.run)
				if err != nil || len(acts) != 1 {
					t.Fatalf("actions of %s = %d, %v", c.run, len(acts), err)
				}
				evs, err := tx.EventsAfter(ctx, ownerA, c.run, 0, 10)
				if err != nil || len(evs) != 1 {
					t.Fatalf("events of %s = %d, %v", c.run, len(evs), err)
				}
			}
			msgs, err := tx.LastMessages(ctx, ownerA, f, 10)
			if err != nil || !reflect.DeepEqual(contents(msgs), []string{"one", "two"}) {
				t.Fatalf("fork history after deleting its parent = %v, %v", contents(msgs), err)
			}
			return nil
		})
		// Deleting the fork itself takes its runs with it.
		write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, f.ID) })
		read(t, st, func(tx store.Tx) error {
			_, err := tx.GetRun(ctx, ownerA, "run_fork")
			wantCode(t, err, carryon.ENOTFOUND)
			return nil
		})
	})

	testJournal(t, open)
}
