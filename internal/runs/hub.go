package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/failpoint"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/telemetry"
)

// hub implements engine.Hub for one attempt of a run: every write checks, in its transaction,
// that the run is still running at this attempt, so a runner that lost the run cannot write, and
// stores the events that report the change in the same transaction (on PostgreSQL the NOTIFY
// that wakes other instances' followers rides in it too). The followers in this process are
// woken once it committed.
type hub struct {
	s       *Service
	attempt int
	span    *telemetry.RunSpan // the attempt's span, told the session versions the run writes

	mu   sync.Mutex
	last int64 // the seq of the last event this attempt knows stored: its previews follow it
	held bool  // the attempt holds a budget hold for the model call in progress (budgets.go)

	ended atomic.Bool // the final answer's commit ended the run: the runner records no end
}

var (
	_ engine.Hub            = (*hub)(nil)
	_ engine.SessionJournal = (*hub)(nil)
)

func (h *hub) fence(run *carryon.Run) *carryon.RunFence {
	return &carryon.RunFence{RunID: run.ID, Attempt: h.attempt}
}

// fenced runs fn in a write transaction after checking the fence; fn gets the stored run and an
// events to store its events with.
func (h *hub) fenced(ctx context.Context, run *carryon.Run, fn func(tx store.Tx, r *carryon.Run, ev *events) error) ([]carryon.Event, error) {
	var ev *events
	err := h.s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		now := h.s.now()                         // read under the write lock, so commit order and times agree
		ev = &events{tx: tx, run: run, now: now} // fn may run again: start over
		r, err := h.check(ctx, tx, run)
		if err != nil {
			return err
		}
		return fn(tx, r, ev)
	})
	if err != nil {
		return nil, err
	}
	return h.stored(run, ev), nil
}

// written runs a session write of the run (sessions.Write with the run's fence, which checks the
// attempt in the transaction); fn stores its events with ev.
func (h *hub) written(ctx context.Context, run *carryon.Run, op string, fn func(tx store.Tx, sess *carryon.Session, ev *events) error) ([]carryon.Event, error) {
	var ev *events
	_, err := sessions.Write(ctx, h.s.sess, op, run.SessionID, "", nil, func(tx store.Tx, own string, now time.Time) (struct{}, error) {
		ev = &events{tx: tx, run: run, now: now}
		sess, err := sessions.LoadWritable(ctx, tx, own, run.SessionID, nil, h.fence(run), now)
		if err != nil {
			return struct{}{}, err
		}
		return struct{}{}, fn(tx, sess, ev)
	})
	if err != nil {
		return nil, err
	}
	return h.stored(run, ev), nil
}

// stored is what happens once a write and its events committed: the followers here are woken, the
// attempt's span learns the session version of its messages, and the last seq moves on.
func (h *hub) stored(run *carryon.Run, ev *events) []carryon.Event {
	if len(ev.out) == 0 {
		return nil
	}
	h.mu.Lock()
	h.last = max(h.last, ev.out[len(ev.out)-1].Seq)
	h.mu.Unlock()
	h.s.previews.clear(run.ID, h.attempt) // stored now, with this write or an earlier one
	if ended(ev.out) {
		h.s.notify.local(run.ID)
	} else {
		h.s.notify.progress(run.ID) // the run's status waiters (Wait) sleep on
	}
	for _, e := range ev.out {
		if e.Type == carryon.EventMessageAppended && h.span != nil {
			var res struct {
				Version int64 `json:"version"`
			}
			if json.Unmarshal(e.Data, &res) == nil {
				h.span.SessionVersion(res.Version)
			}
		}
	}
	return ev.out
}

// ended says whether evs hold the event of a run's end (a write of the run that ended it).
func ended(evs []carryon.Event) bool {
	for _, e := range evs {
		if e.Type == carryon.EventRunFinished || e.Type == carryon.EventRunFailed {
			return true
		}
	}
	return false
}

// events stores the events of one write transaction of the run.
type events struct {
	tx  store.Tx
	run *carryon.Run
	now time.Time
	out []carryon.Event
}

// add stores an event of type typ with data (JSON bytes as they are, anything else encoded).
func (ev *events) add(ctx context.Context, typ carryon.EventType, data any) error {
	b, ok := data.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(data); err != nil {
			return fmt.Errorf("encode event %s: %w", typ, err)
		}
	}
	e := carryon.Event{RunID: ev.run.ID, Type: typ, Data: b, CreatedAt: ev.now}
	if err := ev.tx.AppendEvent(ctx, ev.run.OwnerID, &e); err != nil {
		return fmt.Errorf("store event %s: %w", typ, err)
	}
	ev.out = append(ev.out, e)
	return nil
}

// deltas stores a model call's deltas.
func (ev *events) deltas(ctx context.Context, deltas []json.RawMessage) error {
	for _, d := range deltas {
		if err := ev.add(ctx, carryon.EventModelDelta, d); err != nil {
			return err
		}
	}
	return nil
}

func (h *hub) check(ctx context.Context, tx store.Tx, run *carryon.Run) (*carryon.Run, error) {
	r, err := tx.GetRun(ctx, run.OwnerID, run.ID)
	if err != nil {
		return nil, err
	}
	if r.Attempt != h.attempt || r.Status != carryon.RunRunning {
		h.s.log.Warn("refused a write of a fenced-off runner", "run", run.ID, "attempt", h.attempt, "current_attempt", r.Attempt, "status", r.Status)
		return nil, carryon.Errorf(carryon.EFENCED, "run %s is at attempt %d (%s); a write of attempt %d is refused", r.ID, r.Attempt, r.Status, h.attempt)
	}
	return r, nil
}

func (h *hub) AppendMessages(ctx context.Context, run *carryon.Run, msgs []carryon.NewMessage) ([]carryon.Event, error) {
	return h.written(ctx, run, "run.summary", func(tx store.Tx, sess *carryon.Session, ev *events) error {
		res, err := sessions.AppendInTx(ctx, tx, sess, msgs, run.ID, "", ev.now)
		if err != nil {
			return err
		}
		return ev.add(ctx, carryon.EventMessageAppended, res)
	})
}

// Compact stores the run's compaction of its session under requestID: a used id stores nothing
// (an earlier attempt compacted), else plan asks the summarizer outside any transaction and one
// fenced session write appends the summary with the id, so a crash leaves the whole compaction or
// none, and the step's next attempt finds the id used.
func (h *hub) Compact(ctx context.Context, run *carryon.Run, requestID string, plan func(context.Context) (carryon.NewMessage, error)) ([]carryon.Event, error) {
	if _, used, err := h.s.sess.RequestIDUsed(ctx, requestID); err != nil || used {
		return nil, err
	}
	msg, err := plan(ctx)
	if err != nil {
		return nil, err
	}
	var ev *events
	input := struct {
		Run string `json:"run"`
	}{run.ID}
	_, err = sessions.Write(ctx, h.s.sess, "run.compact", run.SessionID, requestID, input, func(tx store.Tx, own string, now time.Time) (struct{}, error) {
		ev = &events{tx: tx, run: run, now: now}
		sess, err := sessions.LoadWritable(ctx, tx, own, run.SessionID, nil, h.fence(run), now)
		if err != nil {
			return struct{}{}, err
		}
		res, err := sessions.AppendInTx(ctx, tx, sess, []carryon.NewMessage{msg}, run.ID, requestID, now)
		if err != nil {
			return struct{}{}, err
		}
		if err := ev.add(ctx, carryon.EventMessageAppended, res); err != nil {
			return struct{}{}, err
		}
		failpoint.Hit(failpoint.CompactWriting)
		return struct{}{}, nil
	})
	if err != nil || ev == nil {
		return nil, err // ev is nil when the write replayed an earlier attempt's
	}
	return h.stored(run, ev), nil
}

func (h *hub) WorkingMemoryPreview(ctx context.Context, run *carryon.Run, patches []json.RawMessage) (carryon.WorkingMemory, error) {
	st, err := h.s.sess.GetWorkingMemory(ctx, run.SessionID)
	if err != nil {
		return nil, err
	}
	return sessions.PreviewWorkingMemory(st.WorkingMemory, patches...)
}

// PlanStep stores the model's answer that calls tools, and records what the call spent, in one
// transaction.
func (h *hub) PlanStep(ctx context.Context, run *carryon.Run, p engine.Plan) ([]carryon.Event, error) {
	var spent *carryon.ModelCall
	evs, err := h.written(ctx, run, "run.plan", func(tx store.Tx, sess *carryon.Session, ev *events) error {
		if err := ev.deltas(ctx, p.Deltas); err != nil {
			return err
		}
		res, err := sessions.AppendInTx(ctx, tx, sess, []carryon.NewMessage{p.Assistant}, run.ID, "", ev.now)
		if err != nil {
			return err
		}
		for _, a := range p.Actions {
			if err := tx.InsertAction(ctx, run.OwnerID, a); err != nil {
				return err
			}
		}
		if err := ev.add(ctx, carryon.EventMessageAppended, withUsage(res, p.Usage, p.CachedTokens)); err != nil {
			return err
		}
		if a := p.Actions[0]; a.Status == carryon.ActionStarted {
			// The first call runs right after: its start renews the lease, as StartAction's does.
			r, err := tx.GetRun(ctx, run.OwnerID, run.ID)
			if err != nil {
				return err
			}
			if err := h.renew(ctx, tx, r, ev.now); err != nil {
				return err
			}
			if err := ev.add(ctx, carryon.EventToolStarted, a); err != nil {
				return err
			}
		}
		// Last: the user's counters are rows every run of the user writes, locked from here to
		// the commit on PostgreSQL.
		spent, err = h.recordSpend(ctx, tx, run, p.Usage, p.CachedTokens, ev.now)
		if err != nil {
			return err
		}
		return h.release(ctx, tx, run, spent)
	})
	h.released(err)
	h.spent(spent, err)
	return evs, err
}

// spent counts a committed step's spend in the metrics.
func (h *hub) spent(c *carryon.ModelCall, err error) {
	if err == nil && c != nil {
		h.s.cfg.Telemetry.Spent(*c)
	}
}

func (h *hub) StepActions(ctx context.Context, run *carryon.Run, step int) ([]*carryon.Action, error) {
	var out []*carryon.Action
	err := h.s.st.Read(ctx, func(tx store.Tx) error {
		var err error
		out, err = tx.StepActions(ctx, run.OwnerID, run.ID, step)
		return err
	})
	return out, err
}

// LastToolAction returns the newest call of the tool in the run's session that recorded a
// fingerprint after it (engine.SessionJournal), or nil.
func (h *hub) LastToolAction(ctx context.Context, run *carryon.Run, name string) (*carryon.Action, error) {
	var out *carryon.Action
	err := h.s.st.Read(ctx, func(tx store.Tx) error {
		var err error
		out, err = tx.LastToolAction(ctx, run.OwnerID, run.SessionID, name)
		return err
	})
	return out, err
}

// StartAction journals the call before it (done) as finished, then the call as started, and
// renews the run's lease, in one fenced transaction: an effect starts only while this attempt
// holds the run, with a whole lease ahead of it (never in the last moments of a lease that a
// paused heartbeat failed to renew).
func (h *hub) StartAction(ctx context.Context, run *carryon.Run, done, a *carryon.Action) ([]carryon.Event, error) {
	return h.fenced(ctx, run, func(tx store.Tx, r *carryon.Run, ev *events) error {
		if err := h.finished(ctx, tx, run, done, ev); err != nil {
			return err
		}
		if err := h.renew(ctx, tx, r, ev.now); err != nil {
			return err
		}
		if err := tx.UpdateAction(ctx, run.OwnerID, a); err != nil {
			return err
		}
		return ev.add(ctx, carryon.EventToolStarted, a)
	})
}

// renew renews the lease of the run r (as stored, this attempt's) from now.
func (h *hub) renew(ctx context.Context, tx store.Tx, r *carryon.Run, now time.Time) error {
	lease := now.Add(h.s.cfg.LeaseTTL)
	r.LeaseExpiresAt, r.UpdatedAt = &lease, now
	return tx.UpdateRun(ctx, r, h.attempt)
}

func (h *hub) FinishAction(ctx context.Context, run *carryon.Run, a *carryon.Action) ([]carryon.Event, error) {
	return h.fenced(ctx, run, func(tx store.Tx, _ *carryon.Run, ev *events) error {
		return h.finished(ctx, tx, run, a, ev)
	})
}

// finished journals how the call a ended (nothing when a is nil) with its tool.finished event,
// or that it waits.
func (h *hub) finished(ctx context.Context, tx store.Tx, run *carryon.Run, a *carryon.Action, ev *events) error {
	if a == nil {
		return nil
	}
	if err := tx.UpdateAction(ctx, run.OwnerID, a); err != nil {
		return err
	}
	if a.Status == carryon.ActionWaiting {
		return nil // the run's end (requires_action, waiting_approval) reports it
	}
	return ev.add(ctx, carryon.EventToolFinished, a)
}

// CommitStep stores the step's checkpoint in one transaction: a final answer's spend and deltas, the working
// memory changes of the step (one revision each, in order), then its messages (which move the
// session to the version the revisions name), then the run's step, usage and reply, with their
// events (memory.updated once, with the memory as the step left it; message.appended).
func (h *hub) CommitStep(ctx context.Context, run *carryon.Run, c engine.Commit) ([]carryon.Event, error) {
	var spent *carryon.ModelCall
	evs, err := h.written(ctx, run, "run.commit", func(tx store.Tx, sess *carryon.Session, ev *events) error {
		if err := h.finished(ctx, tx, run, c.Done, ev); err != nil {
			return err
		}
		if err := ev.deltas(ctx, c.Deltas); err != nil {
			return err
		}
		var wm *carryon.WorkingMemoryState
		for _, p := range c.Patches {
			st, changed, err := sessions.PatchWorkingMemoryInTx(ctx, tx, sess, p, run.ID, ev.now)
			if err != nil {
				return fmt.Errorf("apply the step's working memory change: %w", err)
			}
			if changed {
				wm = st
			}
		}
		if len(c.Patches) > 0 {
			failpoint.Hit(failpoint.StepPatched)
		}
		res, err := sessions.AppendInTx(ctx, tx, sess, c.Messages, run.ID, "", ev.now)
		if err != nil {
			return err
		}
		r, err := tx.GetRun(ctx, run.OwnerID, run.ID)
		if err != nil {
			return err
		}
		r.Step, r.Usage, r.Reply, r.UpdatedAt = run.Step, run.Usage, run.Reply, ev.now
		if run.Reply == "" {
			if err := tx.UpdateRun(ctx, r, h.attempt); err != nil {
				return err
			}
		}
		if wm != nil {
			wm.Version = res.Version
			res.WorkingMemory = wm
			if err := ev.add(ctx, carryon.EventWorkingMemoryUpdated, wm.WorkingMemory); err != nil {
				return err
			}
		}
		if err := ev.add(ctx, carryon.EventMessageAppended, withUsage(res, c.Usage, c.CachedTokens)); err != nil {
			return err
		}
		spent, err = h.recordSpend(ctx, tx, run, c.Usage, c.CachedTokens, ev.now) // last, as in PlanStep
		if err != nil {
			return err
		}
		if err := h.release(ctx, tx, run, spent); err != nil {
			return err
		}
		if run.Reply == "" {
			return nil
		}
		// The final answer is the run's last write: the run ends in its transaction.
		return h.end(ctx, tx, r, ev)
	})
	h.released(err)
	h.spent(spent, err)
	if err == nil && run.Reply != "" {
		h.ended.Store(true)
	}
	return evs, err
}

// end records in tx that the run r (as stored, at this attempt, with its step, usage and reply
// set) succeeded, with its run.finished event and the webhooks' outbox rows (finishTx).
func (h *hub) end(ctx context.Context, tx store.Tx, r *carryon.Run, ev *events) error {
	e, err := endTx(ctx, tx, r, h.attempt, carryon.RunSucceeded, r.Reply, "", ev.now)
	if err != nil {
		return err
	}
	ev.out = append(ev.out, *e)
	return nil
}

func (h *hub) StopRequested(ctx context.Context, run *carryon.Run) (string, error) {
	var reason string
	err := h.s.st.Read(ctx, func(tx store.Tx) error {
		r, err := tx.GetRun(ctx, run.OwnerID, run.ID)
		if err != nil {
			return err
		}
		if r.Attempt != h.attempt {
			return carryon.Errorf(carryon.EFENCED, "run %s moved to attempt %d", r.ID, r.Attempt)
		}
		reason = r.StopRequested
		return nil
	})
	return reason, err
}

// Preview hands a model delta to the streams of the run in this process, after the last event
// this attempt stored (streams elsewhere get it when the step's next write stores it).
func (h *hub) Preview(ctx context.Context, run *carryon.Run, ev carryon.Event) {
	h.mu.Lock()
	after := h.last
	h.mu.Unlock()
	if h.s.previews.add(run.ID, previewKey{attempt: h.attempt, after: after}, ev) {
		h.s.follows.wake(run.OwnerID, run.ID)
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
