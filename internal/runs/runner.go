package runs

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
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
	s.mu.Lock()
	s.work = ctx
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.work = nil
		s.mu.Unlock()
	}()
	for {
		if err := s.claimAll(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("look for runnable runs", "err", err)
		}
		if err := s.expireWaiting(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("fail the runs that waited too long for tool outputs", "err", err)
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
// through the store's Notifier, until ctx is done; a run executing here that another process asked
// to stop learns of it at once. Without a Notifier it returns at once (streams and runners poll,
// and each runner looks for stop requests at every heartbeat).
func (s *Service) Listen(ctx context.Context) {
	if s.notify.remote == nil {
		return
	}
	_ = s.notify.remote.Listen(ctx, notifyChannel, func(runID string) {
		if runID == store.Resubscribed {
			// The listener lost its connection and listens again: what was announced meanwhile
			// is lost, so every stream, runner and running run here catches up from the store.
			s.notify.localAll()
			s.Wake()
			for _, r := range s.runningAll() {
				go s.checkStop(ctx, r)
			}
			return
		}
		s.notify.local(runID)
		s.Wake()
		if r := s.runningHere(runID); r != nil {
			go s.checkStop(ctx, r)
		}
	})
}

// running is a run executing in this process.
type running struct {
	run    *carryon.Run // the claimed run (ID, OwnerID and Attempt do not change)
	cancel context.CancelCauseFunc
}

// runningHere returns the run if it executes in this process, else nil.
func (s *Service) runningHere(runID string) *running {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[runID]
}

// runningAll returns the runs executing in this process.
func (s *Service) runningAll() []*running {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*running, 0, len(s.running))
	for _, r := range s.running {
		out = append(out, r)
	}
	return out
}

// stopHere cancels the run if it executes in this process: a model call in progress is abandoned;
// a tool call in progress finishes and is journaled when cause is an *engine.ErrStopped.
func (s *Service) stopHere(runID string, cause error) {
	if r := s.runningHere(runID); r != nil {
		r.cancel(cause)
	}
}

// checkStop reads whether the run was asked to stop and stops it here if so.
func (s *Service) checkStop(ctx context.Context, r *running) {
	var reason string
	err := s.st.Read(ctx, func(tx store.Tx) error {
		cur, err := tx.GetRun(ctx, r.run.OwnerID, r.run.ID)
		if err == nil && cur.Attempt == r.run.Attempt {
			reason = cur.StopRequested
		}
		return err
	})
	if err == nil && reason != "" {
		r.cancel(&engine.ErrStopped{Reason: reason})
	}
}

// claimAll takes as many runnable runs as it has free workers for, in one write transaction,
// after a read has found that there are some. On PostgreSQL the candidates are locked with SKIP
// LOCKED, so instances claiming at the same time take different runs instead of queueing on the
// same rows.
func (s *Service) claimAll(ctx context.Context) error {
	s.mu.Lock()
	free := s.cfg.Workers - len(s.running) - s.reserved
	s.mu.Unlock()
	if free <= 0 {
		return nil
	}
	// Look first, write only when there is something to take: an idle server commits nothing.
	if found, err := s.anyRunnable(ctx, free); err != nil || !found {
		return err
	}
	var claimed []*carryon.Run
	var st claimStats
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		claimed, st = claimed[:0], claimStats{takeovers: map[string]bool{}, started: map[string]int64{}} // fn may run again after a deadlock
		now := s.now()
		// More candidates than free workers: runs of an owner at its run limit are skipped, and
		// must not hold back other owners' runs.
		cands, err := tx.RunnableRuns(ctx, now, free+claimSlack)
		if err != nil {
			return err
		}
		for _, c := range cands {
			if len(claimed) == free {
				break
			}
			if s.runningHere(c.ID) != nil {
				continue
			}
			run, err := s.claim(ctx, tx, c, now, &st)
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
	for _, r := range st.ended {
		s.cfg.Telemetry.RunEnded(r.Agent, carryon.RunFailed)
		s.notify.local(r.ID) // its streams end now, not at their next poll
	}
	for _, run := range claimed {
		s.cfg.Telemetry.RunClaimed(run, st.takeovers[run.ID])
		s.notify.local(run.ID)
		s.launch(ctx, run, st.started[run.ID], 0)
	}
	return nil
}

// launch executes a run claimed for this process, whose run.started event is seq, on a worker of
// its own until it stops, or until ctx (the Work loop's) is done: a shutdown. held is how many
// reserved workers (claimhere.go) the run takes over.
func (s *Service) launch(ctx context.Context, run *carryon.Run, seq int64, held int) {
	s.slots <- struct{}{}
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	s.mu.Lock()
	s.reserved -= held
	s.running[run.ID] = &running{run: run, cancel: cancel}
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
		s.execute(runCtx, run, seq)
	}()
}

// claimSlack is how many runnable runs a claim reads beyond its free workers.
const claimSlack = 16

// anyRunnable says, from a read transaction, whether a run that this process does not execute
// already is runnable now (the claim reads again under the write lock).
func (s *Service) anyRunnable(ctx context.Context, limit int) (bool, error) {
	found := false
	err := s.st.Read(ctx, func(tx store.Tx) error {
		cands, err := tx.RunnableRuns(ctx, s.now(), limit)
		for _, c := range cands {
			if s.runningHere(c.ID) == nil {
				found = true
			}
		}
		return err
	})
	return found, err
}

var errShutdown = errors.New("the server is shutting down")

// runSlot says, in a claim's transaction, whether the owner may have one more run running: its
// running runs, on every instance, are fewer than its max_concurrent_runs (the admin's for it, or
// Config.MaxRunsPerUser; 0 is no bound). It counts under the owner's lock of run claims
// (store.Limits.LockRunSlots), so two instances never both claim the owner's last slot; when
// another instance holds the lock the answer is no, and a later claim tries again.
func (s *Service) runSlot(ctx context.Context, tx store.Tx, owner string) (bool, error) {
	limit := s.cfg.MaxRunsPerUser
	own, _, _, err := tx.UserLimits(ctx, owner)
	if err != nil {
		return false, err
	}
	if own.MaxRuns != nil {
		limit = *own.MaxRuns
	}
	if limit <= 0 {
		return true, nil
	}
	if ok, err := tx.LockRunSlots(ctx, owner); err != nil || !ok {
		return false, err
	}
	n, err := tx.RunningRuns(ctx, owner)
	return n < limit, err
}

// claimStats is what one claimAll did besides claiming: for the metrics, the runs taken over
// (by id) and the runs it failed (parked, or whose profile is gone); for the runners, the seq of
// each claimed run's run.started event.
type claimStats struct {
	takeovers map[string]bool
	ended     []*carryon.Run
	started   map[string]int64
}

// claim takes a runnable run for this process in tx: a new attempt with a lease. It returns nil
// when the run is no longer runnable (another runner was faster). A run whose runner's lease ran
// out is a takeover and counts towards MaxAttempts; one whose lease was handed back at shutdown
// (no lease owner) is not.
func (s *Service) claim(ctx context.Context, tx store.Tx, c *carryon.Run, now time.Time, st *claimStats) (*carryon.Run, error) {
	r, err := tx.GetRun(ctx, c.OwnerID, c.ID)
	if err != nil {
		return nil, err
	}
	prev := r.Attempt
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
		if ok, err := s.runSlot(ctx, tx, r.OwnerID); err != nil || !ok {
			return nil, err // the owner runs as many as it may: the run waits queued
		}
	case r.Status == carryon.RunRunning && r.LeaseExpiresAt != nil && r.LeaseExpiresAt.Before(now):
		if r.LeaseOwner != "" {
			r.Takeovers++
			if r.Takeovers >= s.cfg.MaxAttempts {
				s.log.Error("parking a run that keeps crashing", "run", r.ID, "takeovers", r.Takeovers)
				r.Attempt++ // the last runner, should it wake up, is fenced off
				st.ended = append(st.ended, r)
				return nil, finishTx(ctx, tx, r, prev, carryon.RunFailed, "", fmt.Sprintf("parked after its runner stopped %d times before the run ended (last runner %s)", r.Takeovers, r.LeaseOwner), now)
			}
			s.log.Warn("taking over a run whose lease expired", "run", r.ID, "attempt", r.Attempt, "owner", r.LeaseOwner)
			st.takeovers[r.ID] = true
		}
	default:
		return nil, nil
	}
	if r.TriggerSeq == 0 {
		// An enqueued run's turn came: its message joins the session now.
		sess, err := sessions.LoadWritable(ctx, tx, r.OwnerID, r.SessionID, nil, nil, now)
		if err != nil {
			st.ended = append(st.ended, r)
			return nil, finishTx(ctx, tx, r, prev, carryon.RunFailed, "", "the run could not start: "+carryon.ErrorMessage(err), now)
		}
		if err := appendTrigger(ctx, tx, sess, r, now); err != nil {
			return nil, err
		}
	}
	// The run records the definition of its profile it runs with now (a restart may have brought
	// another agents file); a profile that is gone fails the run.
	agent, err := s.agents.Agent(r.Agent)
	if err != nil {
		r.Attempt++ // a runner of an earlier attempt, should it wake up, is fenced off
		st.ended = append(st.ended, r)
		return nil, finishTx(ctx, tx, r, prev, carryon.RunFailed, "", "the run could not start: "+carryon.ErrorMessage(err), now)
	}
	if r.AgentDigest != "" && r.AgentDigest != agent.Digest {
		s.log.Info("the run's agent profile changed since it started", "run", r.ID, "agent", r.Agent, "was", r.AgentDigest, "now", agent.Digest)
	}
	r.Model, r.AgentDigest = agent.Model, agent.Digest
	lease := now.Add(s.cfg.LeaseTTL)
	r.Status, r.Attempt, r.LeaseOwner, r.LeaseExpiresAt, r.UpdatedAt = carryon.RunRunning, prev+1, s.cfg.Instance, &lease, now
	if r.StartedAt == nil {
		r.StartedAt = &now
	}
	if err := tx.UpdateRun(ctx, r, prev); err != nil {
		return nil, err
	}
	if err := keepSessionAlive(ctx, tx, r, now); err != nil {
		return nil, err
	}
	e := &carryon.Event{RunID: r.ID, Type: carryon.EventRunStarted, Data: mustJSON(map[string]any{"attempt": r.Attempt, "runner": s.cfg.Instance}), CreatedAt: now}
	if err := tx.AppendEvent(ctx, r.OwnerID, e); err != nil {
		return nil, fmt.Errorf("store event %s: %w", e.Type, err)
	}
	st.started[r.ID] = e.Seq
	return r, nil
}

// execute runs the engine on a claimed run whose run.started event is seq, heartbeating its lease,
// and records how it ended. A panic fails the run (its stack goes to the log) and never takes the
// process down.
func (s *Service) execute(ctx context.Context, run *carryon.Run, seq int64) {
	ctx, span := s.cfg.Telemetry.StartRun(ctx, run)
	log := s.log.With("run", run.ID, "session", run.SessionID, "attempt", run.Attempt)
	if id := span.TraceID(); id != "" {
		log = log.With("trace_id", id)
	}
	log.Info("run started")
	ctx = carryon.NewContextWithUser(ctx, &carryon.User{ID: run.OwnerID})
	hbCtx, stopHB := context.WithCancel(ctx)
	defer stopHB()
	defer func() {
		if p := recover(); p != nil {
			stopHB()
			log.Error("run panicked", "panic", p, "stack", string(debug.Stack()))
			bg := context.WithoutCancel(ctx)
			if err := s.finish(bg, run, carryon.RunFailed, "", "internal error: the run stopped on an unexpected fault in the server (the server's log has the details)"); err != nil {
				log.Error("record the end of the run", "err", err)
				s.releaseLease(bg, run)
			}
			span.End(run, carryon.RunFailed, fmt.Errorf("panic: %v", p))
		}
	}()
	h := &hub{s: s, attempt: run.Attempt, span: span, last: seq}
	go s.heartbeat(hbCtx, run, &h.ended)

	var runErr error
	eng, err := s.agents.Engine(ctx, run.Agent)
	if err != nil {
		runErr = err
	} else {
		for _, err := range eng.Run(ctx, h, run) {
			if err != nil {
				runErr = err
			}
		}
	}
	stopHB()
	s.previews.clear(run.ID, run.Attempt) // what the attempt previewed and did not store is lost
	if runErr == nil && h.ended.Load() {
		// The final answer's commit ended the run in its transaction.
		span.End(run, carryon.RunSucceeded, nil)
		log.Info("run ended", "status", carryon.RunSucceeded, "steps", run.Step)
		return
	}
	status, msg := carryon.RunSucceeded, ""
	var stopped *engine.ErrStopped
	var approval *engine.NeedsApproval
	var outputs *engine.NeedsOutputs
	var budget *carryon.BudgetStop
	cause := context.Cause(ctx)
	switch {
	case runErr == nil:
	case errors.As(runErr, &budget):
		status, msg, run.BudgetStop = carryon.RunWaitingApproval, budget.Error(), budget
		if budget.OnExceed == carryon.BudgetFail {
			status = carryon.RunFailed
		}
		s.cfg.Telemetry.BudgetStopped(budget)
	case errors.As(runErr, &approval):
		status, msg = carryon.RunWaitingApproval, approval.Error()
	case errors.As(runErr, &outputs):
		status = carryon.RunRequiresAction
	case errors.As(runErr, &stopped) || errors.As(cause, &stopped):
		status, msg = carryon.RunCancelled, "cancelled by the user"
		if stopped.Reason == "interrupt" {
			status, msg = carryon.RunInterrupted, "interrupted by a newer run"
		}
	case errors.Is(cause, errShutdown):
		log.Info("run paused for shutdown; the next runner takes it over")
		s.releaseLease(context.WithoutCancel(ctx), run)
		span.End(run, "", runErr)
		return
	case carryon.ErrorCode(runErr) == carryon.EFENCED || carryon.ErrorCode(cause) == carryon.EFENCED:
		log.Warn("run lost to another runner; stopping without writing", "err", runErr)
		span.End(run, "", runErr)
		return
	default:
		status, msg = carryon.RunFailed, runErr.Error()
	}
	if err := s.finish(context.WithoutCancel(ctx), run, status, run.Reply, msg); err != nil {
		log.Error("record the end of the run", "err", err)
		span.End(run, "", err)
		return
	}
	span.End(run, status, runErr)
	log.Info("run ended", "status", status, "steps", run.Step, "error", msg)
}

// finish records the end of a run, fenced by its attempt: a runner that lost the run, or whose run
// was parked or ended meanwhile, changes nothing.
func (s *Service) finish(ctx context.Context, run *carryon.Run, status carryon.RunStatus, reply, msg string) error {
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		now := s.now()
		r, err := tx.GetRun(ctx, run.OwnerID, run.ID)
		if err != nil {
			return err
		}
		if r.Attempt != run.Attempt || r.Status != carryon.RunRunning {
			return carryon.Errorf(carryon.EFENCED, "run %s is at attempt %d (%s); attempt %d may not finish it", r.ID, r.Attempt, r.Status, run.Attempt)
		}
		r.Step, r.Usage, r.BudgetStop = run.Step, run.Usage, run.BudgetStop
		return finishTx(ctx, tx, r, r.Attempt, status, reply, msg, now)
	})
	s.notify.local(run.ID)
	return err
}

// heartbeat renews the run's lease and keeps its session alive until ctx is done. When the run was
// taken over it cancels the run; when a stop was requested (here or through another instance) it
// stops the run, abandoning a model call in progress. When the lease cannot be renewed (the
// database is unavailable) and would run out before the next heartbeat, it stops the run as lost:
// another runner may take it over once the lease is over, so this one must start no further effect
// (the fenced writes would refuse it anyway) nor record an end.
//
// ended says the run ended (its final answer's commit): a renewal refused after that is no loss.
func (s *Service) heartbeat(ctx context.Context, run *carryon.Run, ended *atomic.Bool) {
	t := time.NewTicker(s.cfg.Heartbeat)
	defer t.Stop()
	leaseEnd := s.now().Add(s.cfg.LeaseTTL)
	if run.LeaseExpiresAt != nil {
		leaseEnd = *run.LeaseExpiresAt
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var stop string
		var lease time.Time
		// A renewal that has not committed by the end of the lease is too late: it is abandoned
		// (a stalled database), and the run stops below.
		wctx, cancel := context.WithTimeout(ctx, leaseEnd.Sub(s.now()))
		err := s.st.Write(wctx, func(ctx context.Context, tx store.Tx) error {
			now := s.now()
			r, err := tx.GetRun(ctx, run.OwnerID, run.ID)
			if err != nil {
				return err
			}
			if r.Attempt != run.Attempt || r.Status != carryon.RunRunning {
				return carryon.Errorf(carryon.EFENCED, "run %s moved to attempt %d (%s)", r.ID, r.Attempt, r.Status)
			}
			stop = r.StopRequested
			lease = now.Add(s.cfg.LeaseTTL)
			r.LeaseExpiresAt, r.UpdatedAt = &lease, now
			if err := tx.UpdateRun(ctx, r, run.Attempt); err != nil {
				return err
			}
			return keepSessionAlive(ctx, tx, r, now)
		})
		cancel()
		if err == nil {
			leaseEnd = lease
		}
		switch {
		case ended.Load():
			return
		case carryon.ErrorCode(err) == carryon.EFENCED:
			s.log.Warn("lease lost", "run", run.ID, "attempt", run.Attempt, "err", err)
			s.stopHere(run.ID, err)
			return
		case err != nil && ctx.Err() == nil && !s.now().Add(s.cfg.Heartbeat).Before(leaseEnd):
			s.log.Warn("lease not renewed before it ends; stopping the run before its next effect", "run", run.ID, "attempt", run.Attempt, "lease_end", leaseEnd, "err", err)
			s.stopHere(run.ID, carryon.Errorf(carryon.EFENCED, "the lease of run %s (attempt %d) could not be renewed before it ended; another runner may take the run over", run.ID, run.Attempt))
			return
		case err != nil && ctx.Err() == nil:
			s.log.Error("heartbeat", "run", run.ID, "err", err)
		case stop != "":
			s.stopHere(run.ID, &engine.ErrStopped{Reason: stop})
		}
	}
}

// keepSessionAlive restarts the idle clock of a running run's session without a new version: a run
// longer than the session's idle TTL neither fails on an expired session nor lets the sweeper
// purge the session under it.
func keepSessionAlive(ctx context.Context, tx store.Tx, r *carryon.Run, now time.Time) error {
	sess, err := tx.GetSession(ctx, r.OwnerID, r.SessionID)
	if err != nil {
		return err
	}
	if sess.Status != carryon.SessionActive {
		return nil
	}
	expires := now.Add(time.Duration(sess.IdleTTLSeconds) * time.Second)
	if !sess.ExpiresAt.Before(expires) {
		return nil
	}
	sess.ExpiresAt, sess.LastActiveAt = expires, now
	return tx.UpdateSession(ctx, sess, sess.Version)
}

// releaseLease ends this runner's lease at once and clears its owner, so that the next runner
// (this server after a restart, or another instance) takes the run over without waiting for the
// lease to run out, and without counting it as a takeover.
func (s *Service) releaseLease(ctx context.Context, run *carryon.Run) {
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		now := s.now()
		r, err := tx.GetRun(ctx, run.OwnerID, run.ID)
		if err != nil || r.Attempt != run.Attempt || r.Status != carryon.RunRunning {
			return err
		}
		r.LeaseOwner, r.LeaseExpiresAt, r.UpdatedAt = "", &now, now
		return tx.UpdateRun(ctx, r, run.Attempt)
	})
	if err != nil {
		s.log.Error("release the lease", "run", run.ID, "err", err)
	}
}
