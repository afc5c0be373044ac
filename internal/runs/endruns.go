package runs

import (
	"context"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/store"
)

// forgetReason is the error of a queued or waiting run ended because its user is forgotten.
const forgetReason = "cancelled: its user is being forgotten"

// EndSessionRuns ends the runs of a session that is about to be deleted with the rest of its
// user's data (sessions.Service.Forget calls it, as its sessions.RunEnder, before it deletes the
// session's rows), so that no runner finds its run gone under it: a queued or waiting run, or a
// running one whose lease ran out (no runner holds it), ends cancelled at once; a running one is
// asked to stop, as a cancel does (its runner, in this process or another, stops at its next
// checkpoint and records the end), and waited for up to the lease TTL. A runner that has not
// stopped by then is logged (WARN) and the forget goes on. ENOTFOUND when the session is gone.
func (s *Service) EndSessionRuns(ctx context.Context, owner, sessionID string) error {
	var running []string
	var ended []*carryon.Run
	var err error
	for try := 0; try < 3; try++ {
		running, ended, err = s.endSessionRuns(ctx, owner, sessionID)
		if carryon.ErrorCode(err) != carryon.EFENCED { // a runner claimed a run meanwhile: read again
			break
		}
	}
	if err != nil {
		return err
	}
	for _, r := range ended {
		s.cfg.Telemetry.RunEnded(r.Agent, carryon.RunCancelled)
		s.notify.publish(r.ID)
	}
	for _, id := range running {
		s.stopHere(id, &engine.ErrStopped{Reason: "cancel"})
		s.notify.publish(id) // a runner in another process learns of the stop at once
	}
	wctx, cancel := context.WithTimeout(carryon.NewContextWithUser(ctx, &carryon.User{ID: owner}), s.cfg.LeaseTTL)
	defer cancel()
	for _, id := range running {
		if _, err := s.Wait(wctx, id); err != nil {
			if wctx.Err() != nil && ctx.Err() == nil {
				s.log.Warn("a run of a user being forgotten did not stop in time; its rows go now", "run", id, "session", sessionID, "waited", s.cfg.LeaseTTL)
				return nil
			}
			if carryon.ErrorCode(err) == carryon.ENOTFOUND {
				continue // gone already (another call forgot the session)
			}
			return err
		}
	}
	return nil
}

// endSessionRuns is one transaction of EndSessionRuns: it ends what no runner holds and asks the
// running runs to stop, and returns those and the runs it ended.
func (s *Service) endSessionRuns(ctx context.Context, owner, sessionID string) (running []string, ended []*carryon.Run, err error) {
	err = s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		running, ended = nil, nil
		now := s.now()
		active, err := tx.ActiveRuns(ctx, owner, sessionID)
		if err != nil {
			return err
		}
		for _, r := range active {
			held := r.Status == carryon.RunRunning && (r.LeaseExpiresAt == nil || !r.LeaseExpiresAt.Before(now))
			if !held {
				if err := finishTx(ctx, tx, r, r.Attempt, carryon.RunCancelled, "", forgetReason, now); err != nil {
					return err
				}
				ended = append(ended, r)
				continue
			}
			if r.StopRequested == "" {
				r.StopRequested, r.UpdatedAt = "cancel", now
				if err := tx.UpdateRun(ctx, r, r.Attempt); err != nil {
					return err
				}
			}
			running = append(running, r.ID)
		}
		return nil
	})
	return running, ended, err
}
