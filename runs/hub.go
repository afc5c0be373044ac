package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/engine"
	"github.com/carryon-hub/carryon/failpoint"
	"github.com/carryon-hub/carryon/sessions"
	"github.com/carryon-hub/carryon/store"
	"github.com/carryon-hub/carryon/telemetry"
)

// hub implements engine.Hub for one attempt of a run: every write checks, in its transaction,
// that the run is still running at this attempt, so a runner that lost the run cannot write.
type hub struct {
	s       *Service
	attempt int
	span    *telemetry.RunSpan // the attempt's span, told the session versions the run writes
}

var _ engine.Hub = (*hub)(nil)

func (h *hub) fence(run *carryon.Run) *carryon.RunFence {
	return &carryon.RunFence{RunID: run.ID, Attempt: h.attempt}
}

// fenced runs fn in a write transaction after checking the fence; fn gets the stored run.
func (h *hub) fenced(ctx context.Context, run *carryon.Run, fn func(tx store.Tx, r *carryon.Run, now time.Time) error) error {
	return h.s.st.Write(ctx, func(tx store.Tx) error {
		now := h.s.now() // read under the write lock, so commit order and times agree
		r, err := h.check(ctx, tx, run)
		if err != nil {
			return err
		}
		return fn(tx, r, now)
	})
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

func (h *hub) AppendMessages(ctx context.Context, run *carryon.Run, msgs []carryon.NewMessage) (*carryon.AppendResult, error) {
	return h.s.sess.AppendMessages(ctx, run.SessionID, carryon.AppendInput{Messages: msgs, Fence: h.fence(run)})
}

func (h *hub) WorkingMemoryPreview(ctx context.Context, run *carryon.Run, patches []json.RawMessage) (carryon.WorkingMemory, error) {
	st, err := h.s.sess.GetWorkingMemory(ctx, run.SessionID)
	if err != nil {
		return nil, err
	}
	return sessions.PreviewWorkingMemory(st.WorkingMemory, patches...)
}

func (h *hub) PlanStep(ctx context.Context, run *carryon.Run, assistant carryon.NewMessage, actions []*carryon.Action) (*carryon.AppendResult, error) {
	return sessions.Write(ctx, h.s.sess, "run.plan", run.SessionID, "", nil, func(tx store.Tx, own string, now time.Time) (*carryon.AppendResult, error) {
		sess, err := sessions.LoadWritable(ctx, tx, own, run.SessionID, nil, h.fence(run), now)
		if err != nil {
			return nil, err
		}
		res, err := sessions.AppendInTx(ctx, tx, sess, []carryon.NewMessage{assistant}, run.ID, "", now)
		if err != nil {
			return nil, err
		}
		for _, a := range actions {
			if err := tx.InsertAction(ctx, own, a); err != nil {
				return nil, err
			}
		}
		return res, nil
	})
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

// StartAction journals the call as started and renews the run's lease in the same fenced
// transaction: an effect starts only while this attempt holds the run, with a whole lease ahead of
// it (never in the last moments of a lease that a paused heartbeat failed to renew).
func (h *hub) StartAction(ctx context.Context, run *carryon.Run, a *carryon.Action) error {
	return h.fenced(ctx, run, func(tx store.Tx, r *carryon.Run, now time.Time) error {
		lease := now.Add(h.s.cfg.LeaseTTL)
		r.LeaseExpiresAt, r.UpdatedAt = &lease, now
		if err := tx.UpdateRun(ctx, r, h.attempt); err != nil {
			return err
		}
		return tx.UpdateAction(ctx, run.OwnerID, a)
	})
}

func (h *hub) FinishAction(ctx context.Context, run *carryon.Run, a *carryon.Action) error {
	return h.fenced(ctx, run, func(tx store.Tx, _ *carryon.Run, _ time.Time) error { return tx.UpdateAction(ctx, run.OwnerID, a) })
}

// CommitStep stores the step's checkpoint in one transaction: the working memory changes of the
// step (one revision each, in order), then its messages (which move the session to the version the
// revisions name), then the run's step, usage and reply.
func (h *hub) CommitStep(ctx context.Context, run *carryon.Run, msgs []carryon.NewMessage, patches []json.RawMessage) (*carryon.AppendResult, error) {
	return sessions.Write(ctx, h.s.sess, "run.commit", run.SessionID, "", nil, func(tx store.Tx, own string, now time.Time) (*carryon.AppendResult, error) {
		sess, err := sessions.LoadWritable(ctx, tx, own, run.SessionID, nil, h.fence(run), now)
		if err != nil {
			return nil, err
		}
		var wm *carryon.WorkingMemoryState
		for _, p := range patches {
			st, changed, err := sessions.PatchWorkingMemoryInTx(ctx, tx, sess, p, run.ID, now)
			if err != nil {
				return nil, fmt.Errorf("apply the step's working memory change: %w", err)
			}
			if changed {
				wm = st
			}
		}
		if len(patches) > 0 {
			failpoint.Hit(failpoint.StepPatched)
		}
		res, err := sessions.AppendInTx(ctx, tx, sess, msgs, run.ID, "", now)
		if err != nil {
			return nil, err
		}
		if wm != nil {
			wm.Version = res.Version
			res.WorkingMemory = wm
		}
		r, err := tx.GetRun(ctx, own, run.ID)
		if err != nil {
			return nil, err
		}
		r.Step, r.Usage, r.Reply, r.UpdatedAt = run.Step, run.Usage, run.Reply, now
		return res, tx.UpdateRun(ctx, r, h.attempt)
	})
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

// AppendEvent stores an event of the engine, fenced, and tells the streams.
func (h *hub) AppendEvent(ctx context.Context, run *carryon.Run, ev *carryon.Event) error {
	err := h.fenced(ctx, run, func(tx store.Tx, _ *carryon.Run, now time.Time) error {
		ev.CreatedAt = now
		return tx.AppendEvent(ctx, run.OwnerID, ev)
	})
	if err == nil {
		h.s.notify.publish(run.ID)
		if ev.Type == carryon.EventMessageAppended && h.span != nil {
			var res struct {
				Version int64 `json:"version"`
			}
			if json.Unmarshal(ev.Data, &res) == nil {
				h.span.SessionVersion(res.Version)
			}
		}
	}
	return err
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
