package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// newAction returns a started action of run runID in session sessionID, started at sec.
func newAction(runID, sessionID string, step, index, sec int) *carryon.Action {
	return &carryon.Action{
		ID: fmt.Sprintf("act_%s_%d_%d", runID, step, index), RunID: runID, SessionID: sessionID, Step: step,
		Index: index, Attempt: 1, CallID: fmt.Sprintf("call_%d_%d", step, index), Tool: "read_file",
		Args: json.RawMessage(`{"path":"a.txt"}`), Effect: carryon.EffectRead, Status: carryon.ActionStarted,
		IdempotencyKey: fmt.Sprintf("%s/%d/%d", runID, step, index), StartedAt: at(sec),
	}
}

// checkAction fails the test unless got holds every field of want.
func checkAction(t testing.TB, got, want *carryon.Action) {
	t.Helper()
	if err := diffTimes(map[string][2]*time.Time{
		"StartedAt": {&got.StartedAt, &want.StartedAt}, "FinishedAt": {got.FinishedAt, want.FinishedAt},
	}); err != nil {
		t.Fatalf("action %s: %v", want.ID, err)
	}
	if !jsonEqual(got.Args, want.Args) {
		t.Fatalf("action %s: Args = %s, want %s", want.ID, got.Args, want.Args)
	}
	g, w := *got, *want
	g.StartedAt, g.FinishedAt, g.Args = time.Time{}, nil, nil
	w.StartedAt, w.FinishedAt, w.Args = time.Time{}, nil, nil
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("action:\n got %+v\nwant %+v", g, w)
	}
}

func actionIDs(as []*carryon.Action) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, a.ID)
	}
	return out
}

func eventSeqs(es []*carryon.Event) []int64 {
	out := []int64{}
	for _, e := range es {
		out = append(out, e.Seq)
	}
	return out
}

// runFixture makes session sess_1 of owner A with runs run_1 and run_2.
func runFixture(t testing.TB, st store.Store) *carryon.Session {
	s := newSession(ownerA, "sess_1", at(0))
	insertSession(t, st, s)
	insertRun(t, st, newRun(s, "run_1", carryon.RunRunning, 1))
	insertRun(t, st, newRun(s, "run_2", carryon.RunQueued, 2))
	return s
}

// testJournal covers what a run writes as it goes: the tool journal and events.
func testJournal(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("Actions", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := runFixture(t, st)
		full := newAction("run_1", s.ID, 1, 1, 10)
		full.Effect, full.Tool, full.Attempt = carryon.EffectReconcilable, "write_file", 2
		full.FingerprintBefore, full.FingerprintAfter = "sha256:aaa", "sha256:bbb"
		full.Status, full.Result, full.Error, full.FinishedAt = carryon.ActionFailed, "partial", "disk full", tp(at(11))
		bare := newAction("run_1", s.ID, 1, 0, 9)
		bare.Args, bare.CallID, bare.IdempotencyKey = nil, "", ""
		full.Executor, full.Approval = carryon.ExecutorClient, carryon.ApprovalRequired
		later := newAction("run_1", s.ID, 2, 0, 12)
		// Stored out of order; listed by step and index.
		write(t, st, func(tx store.Tx) error {
			for _, a := range []*carryon.Action{later, full, bare} {
				if err := tx.InsertAction(ctx, ownerA, a); err != nil {
					return err
				}
			}
			// The same step and index in another run is another action.
			return tx.InsertAction(ctx, ownerA, newAction("run_2", s.ID, 1, 0, 13))
		})
		list := func(owner, runID string) ([]*carryon.Action, error) {
			var out []*carryon.Action
			err := st.Read(ctx, func(tx store.Tx) error {
				var err error
				out, err = tx.ListActions(ctx, owner, runID)
				return err
			})
			return out, err
		}
		got, err := list(ownerA, "run_1")
		if err != nil || !reflect.DeepEqual(actionIDs(got), []string{bare.ID, full.ID, later.ID}) {
			t.Fatalf("ListActions = %v, %v; want %v", actionIDs(got), err, []string{bare.ID, full.ID, later.ID})
		}
		checkAction(t, got[0], bare)
		checkAction(t, got[1], full)
		checkAction(t, got[2], later)
		var step1 []*carryon.Action
		err = st.Read(ctx, func(tx store.Tx) error {
			var err error
			step1, err = tx.StepActions(ctx, ownerA, "run_1", 1)
			return err
		})
		if err != nil || !reflect.DeepEqual(actionIDs(step1), []string{bare.ID, full.ID}) {
			t.Fatalf("StepActions(run_1, 1) = %v, %v; want %v", actionIDs(step1), err, []string{bare.ID, full.ID})
		}
		err = st.Read(ctx, func(tx store.Tx) error { _, err := tx.StepActions(ctx, ownerB, "run_1", 1); return err })
		if carryon.ErrorCode(err) != carryon.ENOTFOUND {
			t.Fatalf("StepActions of another owner's run: %v, want not_found", err)
		}

		// (run, step, index) is taken even under another id; the action id too.
		dup := newAction("run_1", s.ID, 1, 1, 20)
		dup.ID = "act_other"
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertAction(ctx, ownerA, dup) })
		wantCode(t, err, carryon.ECONFLICT)
		dup = newAction("run_1", s.ID, 5, 0, 20)
		dup.ID = full.ID
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertAction(ctx, ownerA, dup) })
		wantCode(t, err, carryon.ECONFLICT)
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.InsertAction(ctx, ownerA, newAction("run_missing", s.ID, 1, 0, 20))
		})
		wantCode(t, err, carryon.ENOTFOUND)
		// Another owner's run, or a run of another session, is not found either.
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.InsertAction(ctx, ownerB, newAction("run_1", s.ID, 6, 0, 20))
		})
		wantCode(t, err, carryon.ENOTFOUND)
		insertSession(t, st, newSession(ownerA, "sess_other", at(0)))
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.InsertAction(ctx, ownerA, newAction("run_1", "sess_other", 6, 0, 20))
		})
		wantCode(t, err, carryon.ENOTFOUND)
		if got, err := list(ownerA, "run_1"); err != nil || len(got) != 3 {
			t.Fatalf("after refused inserts ListActions = %v, %v", actionIDs(got), err)
		}

		// UpdateAction records the outcome, or clears it.
		done := *later
		done.Status, done.Attempt, done.FingerprintBefore, done.FingerprintAfter = carryon.ActionSucceeded, 3, "b", "a"
		done.Result, done.Error, done.FinishedAt = "42 bytes", "", tp(at(14))
		cleared := *full
		cleared.Status, cleared.Attempt, cleared.FingerprintBefore, cleared.FingerprintAfter = carryon.ActionUnknown, 3, "", ""
		cleared.Result, cleared.Error, cleared.FinishedAt = "", "", nil
		// An approval with edited arguments: the model's are kept aside.
		done.Approval, done.OriginalArgs, done.Args = carryon.ApprovalEdited, done.Args, json.RawMessage(`{"path":"b.txt"}`)
		write(t, st, func(tx store.Tx) error {
			if err := tx.UpdateAction(ctx, ownerA, &done); err != nil {
				return err
			}
			return tx.UpdateAction(ctx, ownerA, &cleared)
		})
		got, err = list(ownerA, "run_1")
		if err != nil || len(got) != 3 {
			t.Fatalf("ListActions = %v, %v", actionIDs(got), err)
		}
		checkAction(t, got[0], bare)
		checkAction(t, got[1], &cleared)
		checkAction(t, got[2], &done)
		missing := done
		missing.ID = "act_missing"
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.UpdateAction(ctx, ownerA, &missing) })
		wantCode(t, err, carryon.ENOTFOUND)
		// The action of another owner's run, or named with another run, is not found: nothing changes.
		stolen := done
		stolen.Status, stolen.Result = carryon.ActionSkipped, "stolen"
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.UpdateAction(ctx, ownerB, &stolen) })
		wantCode(t, err, carryon.ENOTFOUND)
		stolen.RunID = "run_2"
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.UpdateAction(ctx, ownerA, &stolen) })
		wantCode(t, err, carryon.ENOTFOUND)
		if got, err := list(ownerA, "run_1"); err != nil || len(got) != 3 {
			t.Fatalf("ListActions = %v, %v", actionIDs(got), err)
		} else {
			checkAction(t, got[2], &done)
		}

		_, err = list(ownerB, "run_1")
		wantCode(t, err, carryon.ENOTFOUND)
		_, err = list(ownerA, "run_missing")
		wantCode(t, err, carryon.ENOTFOUND)
		insertRun(t, st, newRun(s, "run_3", carryon.RunQueued, 3))
		if got, err := list(ownerA, "run_3"); err != nil || len(got) != 0 {
			t.Fatalf("ListActions of a run without actions = %v, %v", actionIDs(got), err)
		}
	})

	t.Run("RecentActions", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := runFixture(t, st)
		other := newSession(ownerA, "sess_2", at(0))
		insertSession(t, st, other)
		insertRun(t, st, newRun(other, "run_other", carryon.RunRunning, 3))
		acts := []*carryon.Action{
			newAction("run_1", s.ID, 1, 0, 10), newAction("run_1", s.ID, 1, 1, 10), newAction("run_1", s.ID, 2, 0, 10),
			newAction("run_2", s.ID, 1, 0, 11), newAction("run_2", s.ID, 1, 1, 20),
			newAction("run_other", other.ID, 1, 0, 30),
		}
		write(t, st, func(tx store.Tx) error {
			for _, a := range acts {
				if err := tx.InsertAction(ctx, ownerA, a); err != nil {
					return err
				}
			}
			return nil
		})
		// Newest first by start time; within one time, by step then index, descending.
		want := []string{acts[4].ID, acts[3].ID, acts[2].ID, acts[1].ID, acts[0].ID}
		read(t, st, func(tx store.Tx) error {
			for _, limit := range []int{0, 1, 2, 5, 100} {
				got, err := tx.RecentActions(ctx, ownerA, s.ID, limit)
				w := want
				if limit > 0 {
					w = want[:min(limit, len(want))]
				}
				if err != nil || !reflect.DeepEqual(actionIDs(got), w) {
					t.Fatalf("RecentActions(%d) = %v, %v; want %v", limit, actionIDs(got), err, w)
				}
				checkAction(t, got[0], acts[4])
			}
			_, err := tx.RecentActions(ctx, ownerB, s.ID, 10)
			wantCode(t, err, carryon.ENOTFOUND)
			_, err = tx.RecentActions(ctx, ownerA, "sess_missing", 10)
			wantCode(t, err, carryon.ENOTFOUND)
			return nil
		})
	})

	t.Run("LastToolAction", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := runFixture(t, st)
		other := newSession(ownerA, "sess_2", at(0))
		insertSession(t, st, other)
		insertRun(t, st, newRun(other, "run_other", carryon.RunRunning, 3))
		a2a := func(runID, sessionID string, step, sec int, fp string) *carryon.Action {
			a := newAction(runID, sessionID, step, 0, sec)
			a.Tool, a.FingerprintAfter = "planner__send_message", fp
			return a
		}
		acts := []*carryon.Action{
			a2a("run_1", s.ID, 1, 10, "a2a-context:old"), a2a("run_1", s.ID, 2, 20, "a2a-context:new"),
			a2a("run_2", s.ID, 1, 30, ""), newAction("run_2", s.ID, 2, 0, 40),
			a2a("run_other", other.ID, 1, 50, "a2a-context:other"),
		}
		acts[3].FingerprintAfter = "sha256:not-this-tool"
		write(t, st, func(tx store.Tx) error {
			for _, a := range acts {
				if err := tx.InsertAction(ctx, ownerA, a); err != nil {
					return err
				}
			}
			return nil
		})
		read(t, st, func(tx store.Tx) error {
			got, err := tx.LastToolAction(ctx, ownerA, s.ID, "planner__send_message")
			if err != nil || got == nil || got.ID != acts[1].ID {
				t.Fatalf("LastToolAction = %v, %v; want %s (the newest with a fingerprint, of this session)", got, err, acts[1].ID)
			}
			checkAction(t, got, acts[1])
			if got, err := tx.LastToolAction(ctx, ownerA, s.ID, "reader__send_message"); got != nil || err != nil {
				t.Fatalf("LastToolAction of a tool never called = %v, %v; want nil, nil", got, err)
			}
			_, err = tx.LastToolAction(ctx, ownerB, s.ID, "planner__send_message")
			wantCode(t, err, carryon.ENOTFOUND)
			return nil
		})
	})

	t.Run("Events", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		runFixture(t, st)
		appendEvent := func(runID string, typ carryon.EventType, data string, sec int) *carryon.Event {
			t.Helper()
			e := &carryon.Event{RunID: runID, Type: typ, CreatedAt: at(sec)}
			if data != "" {
				e.Data = json.RawMessage(data)
			}
			write(t, st, func(tx store.Tx) error { return tx.AppendEvent(ctx, ownerA, e) })
			return e
		}
		after := func(owner, runID string, seq int64, limit int) ([]*carryon.Event, error) {
			var out []*carryon.Event
			err := st.Read(ctx, func(tx store.Tx) error {
				var err error
				out, err = tx.EventsAfter(ctx, owner, runID, seq, limit)
				return err
			})
			return out, err
		}
		evs := []*carryon.Event{
			appendEvent("run_1", carryon.EventRunStarted, "", 1),
			appendEvent("run_1", carryon.EventModelDelta, `{"text":"hel"}`, 2),
			appendEvent("run_2", carryon.EventRunQueued, `{}`, 3),
			appendEvent("run_1", carryon.EventModelDelta, `{"text":"lo"}`, 4),
		}
		// Each run counts from 1.
		if got := eventSeqs(evs); !reflect.DeepEqual(got, []int64{1, 2, 1, 3}) {
			t.Fatalf("AppendEvent set seqs %v, want [1 2 1 3]", got)
		}
		got, err := after(ownerA, "run_1", 0, 0)
		if err != nil || !reflect.DeepEqual(eventSeqs(got), []int64{1, 2, 3}) {
			t.Fatalf("EventsAfter(0) = %v, %v", eventSeqs(got), err)
		}
		for i, want := range []*carryon.Event{evs[0], evs[1], evs[3]} {
			g := got[i]
			if g.RunID != want.RunID || g.Seq != want.Seq || g.Type != want.Type || !jsonEqual(g.Data, want.Data) ||
				!g.CreatedAt.Equal(want.CreatedAt) {
				t.Fatalf("event %d = %+v, want %+v", i, g, want)
			}
		}
		for _, c := range []struct {
			after int64
			limit int
			want  []int64
		}{{1, 1, []int64{2}}, {1, 5, []int64{2, 3}}, {2, 0, []int64{3}}, {3, 5, []int64{}}, {9, 5, []int64{}}} {
			got, err := after(ownerA, "run_1", c.after, c.limit)
			if err != nil || !reflect.DeepEqual(eventSeqs(got), c.want) {
				t.Fatalf("EventsAfter(%d, %d) = %v, %v; want %v", c.after, c.limit, eventSeqs(got), err, c.want)
			}
		}

		// A rolled-back append leaves no gap; appends in one transaction take consecutive seqs.
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			if err := tx.AppendEvent(ctx, ownerA, &carryon.Event{RunID: "run_1", Type: carryon.EventRunFailed, CreatedAt: at(5)}); err != nil {
				return err
			}
			return errBoom
		})
		if err != errBoom {
			t.Fatalf("Write = %v, want the function's error", err)
		}
		var two [2]*carryon.Event
		write(t, st, func(tx store.Tx) error {
			for i := range two {
				two[i] = &carryon.Event{RunID: "run_1", Type: carryon.EventToolStarted, CreatedAt: at(6 + i)}
				if err := tx.AppendEvent(ctx, ownerA, two[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if two[0].Seq != 4 || two[1].Seq != 5 {
			t.Fatalf("appends after a rollback got seqs %d, %d; want 4, 5", two[0].Seq, two[1].Seq)
		}
		if got, err := after(ownerA, "run_1", 0, 0); err != nil || !reflect.DeepEqual(eventSeqs(got), []int64{1, 2, 3, 4, 5}) {
			t.Fatalf("EventsAfter(0) = %v, %v", eventSeqs(got), err)
		}

		_, err = after(ownerB, "run_1", 0, 10)
		wantCode(t, err, carryon.ENOTFOUND)
		_, err = after(ownerA, "run_missing", 0, 10)
		wantCode(t, err, carryon.ENOTFOUND)
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.AppendEvent(ctx, ownerA, &carryon.Event{RunID: "run_missing", Type: carryon.EventRunStarted, CreatedAt: at(9)})
		})
		wantCode(t, err, carryon.ENOTFOUND)
		err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.AppendEvent(ctx, ownerB, &carryon.Event{RunID: "run_1", Type: carryon.EventRunFailed, CreatedAt: at(9)})
		})
		wantCode(t, err, carryon.ENOTFOUND)
		if got, err := after(ownerA, "run_1", 0, 0); err != nil || len(got) != 5 {
			t.Fatalf("after a foreign append EventsAfter = %v, %v", eventSeqs(got), err)
		}
	})

	// One write appends several events to two runs, interleaved: each run's seqs follow on from
	// its last, another owner's run is still not found, and writers that append and then fail
	// (rolled back, in a batch of group commit beside the others) leave no seq taken: the
	// committed events are 1..n without a gap.
	t.Run("EventsInOneWrite", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		runFixture(t, st)
		ev := func(runID string) *carryon.Event {
			return &carryon.Event{RunID: runID, Type: carryon.EventModelDelta, Data: json.RawMessage(`{}`), CreatedAt: at(1)}
		}
		var got []string
		write(t, st, func(tx store.Tx) error {
			for _, id := range []string{"run_1", "run_1", "run_2", "run_1", "run_2"} {
				e := ev(id)
				if err := tx.AppendEvent(ctx, ownerA, e); err != nil {
					return err
				}
				got = append(got, fmt.Sprintf("%s:%d", id, e.Seq))
			}
			wantCode(t, tx.AppendEvent(ctx, ownerB, ev("run_1")), carryon.ENOTFOUND)
			return nil
		})
		if want := "run_1:1 run_1:2 run_2:1 run_1:3 run_2:2"; strings.Join(got, " ") != want {
			t.Fatalf("seqs %s, want %s", strings.Join(got, " "), want)
		}
		errRolledBack := errors.New("rolled back")
		var wg sync.WaitGroup
		for w := range 16 {
			wg.Go(func() {
				err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
					for range 2 {
						if err := tx.AppendEvent(ctx, ownerA, ev("run_1")); err != nil {
							return err
						}
					}
					if w%2 == 1 {
						return errRolledBack
					}
					return nil
				})
				if err != nil && !errors.Is(err, errRolledBack) {
					t.Errorf("writer %d: %v", w, err)
				}
			})
		}
		wg.Wait()
		var evs []*carryon.Event
		read(t, st, func(tx store.Tx) error {
			var err error
			evs, err = tx.EventsAfter(ctx, ownerA, "run_1", 0, 0)
			return err
		})
		if len(evs) != 3+8*2 {
			t.Fatalf("run_1 holds %d events, want %d", len(evs), 3+8*2)
		}
		for i, e := range evs {
			if e.Seq != int64(i+1) {
				t.Fatalf("seqs %v: a gap or a duplicate at %d", eventSeqs(evs), i)
			}
		}
	})

	// Writers append to the same run from separate write transactions at once: the seqs are
	// 1..n with no gap and no duplicate, and each event is stored under the seq its writer got.
	t.Run("EventsConcurrent", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		runFixture(t, st)
		const writers, each = 8, 10
		var (
			wg  sync.WaitGroup
			mu  sync.Mutex
			got = map[int64]string{}
		)
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					data := fmt.Sprintf(`{"w":%d,"i":%d}`, w, i)
					e := &carryon.Event{RunID: "run_1", Type: carryon.EventModelDelta, Data: json.RawMessage(data), CreatedAt: at(i)}
					err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.AppendEvent(ctx, ownerA, e) })
					if err == nil {
						mu.Lock()
						if prev, taken := got[e.Seq]; taken {
							err = fmt.Errorf("seq %d given to %s and %s", e.Seq, prev, data)
						}
						got[e.Seq] = data
						mu.Unlock()
					}
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("concurrent append: %v", err)
			}
		}
		var evs []*carryon.Event
		read(t, st, func(tx store.Tx) error {
			var err error
			evs, err = tx.EventsAfter(ctx, ownerA, "run_1", 0, 0)
			return err
		})
		if len(evs) != writers*each || len(got) != writers*each {
			t.Fatalf("%d events stored, %d seqs given; want %d", len(evs), len(got), writers*each)
		}
		for i, e := range evs {
			if e.Seq != int64(i+1) || !jsonEqual(e.Data, []byte(got[e.Seq])) {
				t.Fatalf("event %d: seq %d data %s; its writer got %s", i, e.Seq, e.Data, got[e.Seq])
			}
		}
		seqs := slices.Sorted(func(yield func(int64) bool) {
			for s := range got {
				if !yield(s) {
					return
				}
			}
		})
		if seqs[0] != 1 || seqs[len(seqs)-1] != writers*each {
			t.Fatalf("seqs given run from %d to %d", seqs[0], seqs[len(seqs)-1])
		}
	})
}
