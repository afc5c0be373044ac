package runs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/engine"
	"github.com/carryon-hub/carryon/sessions"
	"github.com/carryon-hub/carryon/store"
)

// Wake tells the runners to look for runnable runs now.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Work executes runnable runs in this process until ctx is done: queued runs whose session is
// free, and runs whose runner's lease expired (a crashed or paused process). It returns after the
// runs it started have stopped.
func (s *Service) Work(ctx context.Context) {
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for {
		if err := s.claimAll(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("look for runnable runs", "err", err)
		}
		select {
		case <-ctx.Done():
			for range s.cfg.Workers {
				s.slots <- struct{}{} // wait for every run in progress
			}
			for range s.cfg.Workers {
				<-s.slots
			}
			return
		case <-s.wake:
		case <-t.C:
		}
	}
}

// Listen wakes this process's streams and runners when another process announces a run change
// through the store's Notifier, until ctx is done. Without a Notifier it returns at once (streams
// and runners poll).
func (s *Service) Listen(ctx context.Context) {
	if s.notify.remote == nil {
		return
	}
	_ = s.notify.remote.Listen(ctx, notifyChannel, func(runID string) {
		s.notify.local(runID)
		s.Wake()
	})
}

// claimAll takes as many runnable runs as it has free workers for, in one write transaction. On
// PostgreSQL the candidates are locked with SKIP LOCKED, so instances claiming at the same time
// take different runs instead of queueing on the same rows.
func (s *Service) claimAll(ctx context.Context) error {
	s.mu.Lock()
	free := s.cfg.Workers - len(s.running)
	s.mu.Unlock()
	if free <= 0 {
		return nil
	}
	var claimed []*carryon.Run
	now := s.now()
	err := s.st.Write(ctx, func(tx store.Tx) error {
		claimed = claimed[:0] // fn may run again after a deadlock
		cands, err := tx.RunnableRuns(ctx, now, s.cfg.Workers)
		if err != nil {
			return err
		}
		for _, c := range cands {
			s.mu.Lock()
			_, busy := s.running[c.ID]
			s.mu.Unlock()
			if busy || len(claimed) == free {
				continue
			}
			run, err := s.claim(ctx, tx, c, now)
			if err != nil {
				return err
			}
			if run != nil {
				claimed = append(claimed, run)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, run := range claimed {
		s.notify.publish(run.ID)
		s.slots <- struct{}{}
		runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
		s.mu.Lock()
		s.running[run.ID] = cancel
		s.mu.Unlock()
		stop := context.AfterFunc(ctx, func() { cancel(errShutdown) })
		go func() {
			defer func() {
				stop()
				cancel(nil)
				s.mu.Lock()
				delete(s.running, run.ID)
				s.mu.Unlock()
				<-s.slots
				s.Wake()
			}()
			s.execute(runCtx, run)
		}()
	}
	return nil
}

var errShutdown = errors.New("the server is shutting down")

// claim takes a runnable run for this process in tx: a new attempt with a lease. It returns nil
// when the run is no longer runnable (another runner was faster).
func (s *Service) claim(ctx context.Context, tx store.Tx, c *carryon.Run, now time.Time) (*carryon.Run, error) {
	r, err := tx.GetRun(ctx, c.OwnerID, c.ID)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Status == carryon.RunQueued:
		active, err := tx.ActiveRuns(ctx, r.OwnerID, r.SessionID)
		if err != nil {
			return nil, err
		}
		for _, a := range active {
			if a.Status != carryon.RunQueued || a.CreatedAt.Before(r.CreatedAt) {
				return nil, nil // the session is busy, or an older run goes first
			}
		}
	case r.Status == carryon.RunRunning && r.LeaseExpiresAt != nil && r.LeaseExpiresAt.Before(now):
		if r.Attempt >= s.cfg.MaxAttempts {
			s.log.Error("parking a run that keeps crashing", "run", r.ID, "attempts", r.Attempt)
			return nil, finishTx(ctx, tx, r, carryon.RunFailed, "", fmt.Sprintf("parked after %d attempts: the runner stopped every time before the run ended (last runner %s)", r.Attempt, r.LeaseOwner), now)
		}
		s.log.Warn("taking over a run whose lease expired", "run", r.ID, "attempt", r.Attempt, "owner", r.LeaseOwner)
	default:
		return nil, nil
	}
	if r.TriggerSeq == 0 {
		// An enqueued run's turn came: its message joins the session now.
		sess, err := sessions.LoadWritable(ctx, tx, r.OwnerID, r.SessionID, nil, nil, now)
		if err != nil {
			return nil, finishTx(ctx, tx, r, carryon.RunFailed, "", "the run could not start: "+carryon.ErrorMessage(err), now)
		}
		if err := appendTrigger(ctx, tx, sess, r, now); err != nil {
			return nil, err
		}
	}
	prev := r.Attempt
	lease := now.Add(s.cfg.LeaseTTL)
	r.Status, r.Attempt, r.LeaseOwner, r.LeaseExpiresAt, r.UpdatedAt = carryon.RunRunning, prev+1, s.cfg.Instance, &lease, now
	if r.StartedAt == nil {
		r.StartedAt = &now
	}
	if err := tx.UpdateRun(ctx, r, prev); err != nil {
		return nil, err
	}
	return r, appendEvent(ctx, tx, r.OwnerID, r.ID, carryon.EventRunStarted, map[string]any{"attempt": r.Attempt, "runner": s.cfg.Instance}, now)
}

// execute runs the engine on a claimed run, heartbeating its lease, and records how it ended.
func (s *Service) execute(ctx context.Context, run *carryon.Run) {
	log := s.log.With("run", run.ID, "session", run.SessionID, "attempt", run.Attempt)
	log.Info("run started")
	ctx = carryon.NewContextWithUser(ctx, &carryon.User{ID: run.OwnerID})
	hbCtx, stopHB := context.WithCancel(ctx)
	defer stopHB()
	go s.heartbeat(hbCtx, run)

	h := &hub{s: s, attempt: run.Attempt}
	var reply string
	var runErr error
	for ev, err := range s.engine.Run(ctx, h, run) {
		if err != nil {
			runErr = err
			break
		}
		if ev.Type == carryon.EventRunFinished {
			var f engine.Finished
			_ = jsonUnmarshal(ev.Data, &f)
			reply = f.Reply
			continue
		}
		if err := h.event(ctx, run, ev); err != nil {
			runErr = err
			break
		}
	}
	stopHB()
	status, msg := carryon.RunSucceeded, ""
	var stopped *engine.ErrStopped
	var approval *engine.NeedsApproval
	cause := context.Cause(ctx)
	switch {
	case runErr == nil:
	case errors.As(runErr, &approval):
		status, msg = carryon.RunWaitingApproval, approval.Error()
	case errors.As(runErr, &stopped) || errors.As(cause, &stopped):
		if stopped == nil {
			errors.As(cause, &stopped)
		}
		status, msg = carryon.RunCancelled, "cancelled by the user"
		if stopped.Reason == "interrupt" {
			status, msg = carryon.RunInterrupted, "interrupted by a newer run"
		}
	case errors.Is(cause, errShutdown):
		log.Info("run paused for shutdown; the next runner takes it over")
		s.releaseLease(context.WithoutCancel(ctx), run)
		return
	case carryon.ErrorCode(runErr) == carryon.EFENCED:
		log.Warn("run lost to another runner; stopping without writing", "err", runErr)
		return
	default:
		status, msg = carryon.RunFailed, runErr.Error()
	}
	if err := s.finish(context.WithoutCancel(ctx), run, status, reply, msg); err != nil {
		log.Error("record the end of the run", "err", err)
		return
	}
	log.Info("run ended", "status", status, "steps", run.Step, "error", msg)
}

// finish records the end of a run, fenced by its attempt.
func (s *Service) finish(ctx context.Context, run *carryon.Run, status carryon.RunStatus, reply, msg string) error {
	now := s.now()
	err := s.st.Write(ctx, func(tx store.Tx) error {
		r, err := tx.GetRun(ctx, run.OwnerID, run.ID)
		if err != nil {
			return err
		}
		if r.Attempt != run.Attempt {
			return carryon.Errorf(carryon.EFENCED, "run %s is at attempt %d; attempt %d may not finish it", r.ID, r.Attempt, run.Attempt)
		}
		r.Step, r.Usage = run.Step, run.Usage
		return finishTx(ctx, tx, r, status, reply, msg, now)
	})
	s.notify.publish(run.ID)
	return err
}

// heartbeat renews the run's lease until ctx is done; when the run was taken over it cancels the
// run, and when a stop was requested it cancels the model call in progress.
func (s *Service) heartbeat(ctx context.Context, run *carryon.Run) {
	t := time.NewTicker(s.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := s.now()
		err := s.st.Write(ctx, func(tx store.Tx) error {
			r, err := tx.GetRun(ctx, run.OwnerID, run.ID)
			if err != nil {
				return err
			}
			if r.Attempt != run.Attempt || r.Status != carryon.RunRunning {
				return carryon.Errorf(carryon.EFENCED, "run %s moved to attempt %d (%s)", r.ID, r.Attempt, r.Status)
			}
			lease := now.Add(s.cfg.LeaseTTL)
			r.LeaseExpiresAt, r.UpdatedAt = &lease, now
			return tx.UpdateRun(ctx, r, run.Attempt)
		})
		if carryon.ErrorCode(err) == carryon.EFENCED {
			s.log.Warn("lease lost", "run", run.ID, "attempt", run.Attempt, "err", err)
			s.mu.Lock()
			if cancel := s.running[run.ID]; cancel != nil {
				cancel(err)
			}
			s.mu.Unlock()
			return
		} else if err != nil && ctx.Err() == nil {
			s.log.Error("heartbeat", "run", run.ID, "err", err)
		}
	}
}

// releaseLease ends this runner's lease at once, so that the next runner (this server after a
// restart, or another instance) takes the run over without waiting for the lease to run out.
func (s *Service) releaseLease(ctx context.Context, run *carryon.Run) {
	now := s.now()
	err := s.st.Write(ctx, func(tx store.Tx) error {
		r, err := tx.GetRun(ctx, run.OwnerID, run.ID)
		if err != nil || r.Attempt != run.Attempt || r.Status != carryon.RunRunning {
			return err
		}
		r.LeaseExpiresAt, r.UpdatedAt = &now, now
		return tx.UpdateRun(ctx, r, run.Attempt)
	})
	if err != nil {
		s.log.Error("release the lease", "run", run.ID, "err", err)
	}
}
