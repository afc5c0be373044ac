package sessions

import (
	"context"
	"log/slog"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/store"
)

// SweepResult counts what one sweep removed.
type SweepResult struct {
	// Sessions is how many sessions past the purge horizon were deleted with everything in them.
	Sessions int
	// RequestIDs is how many expired request ids were forgotten.
	RequestIDs int64
}

// Sweep deletes every session that expired more than PurgeAfter ago, with everything in it (its
// workspace too, once the deletion committed), and forgets expired request ids. Each session is
// deleted in its own transaction.
func (s *Service) Sweep(ctx context.Context) (SweepResult, error) {
	var res SweepResult
	horizon := s.now().Add(-s.cfg.PurgeAfter)
	for {
		var refs []store.SessionRef
		err := s.st.Read(ctx, func(tx store.Tx) error {
			var err error
			refs, err = tx.PurgeableSessions(ctx, horizon, 100)
			return err
		})
		if err != nil {
			return res, err
		}
		for _, ref := range refs {
			deleted := false
			err := s.st.Write(ctx, func(tx store.Tx) error {
				deleted = false // fn may run again after a deadlock
				sess, err := tx.GetSession(ctx, ref.OwnerID, ref.ID)
				if carryon.ErrorCode(err) == carryon.ENOTFOUND || (err == nil && !sess.ExpiresAt.Before(horizon)) {
					return nil // gone already, or revived since the read
				} else if err != nil {
					return err
				}
				deleted = true
				return tx.DeleteSession(ctx, ref.OwnerID, ref.ID)
			})
			if err != nil {
				return res, err
			}
			if deleted {
				res.Sessions++
				s.removeWorkspace(ref.ID)
			}
		}
		if len(refs) < 100 {
			break
		}
	}
	now := s.now()
	err := s.st.Write(ctx, func(tx store.Tx) error {
		var err error
		res.RequestIDs, err = tx.SweepIdempotency(ctx, now)
		return err
	})
	return res, err
}

// RunSweeper sweeps every interval until ctx is done, logging what it removed.
func (s *Service) RunSweeper(ctx context.Context, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		res, err := s.Sweep(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("sweep failed", "err", err)
		case res.Sessions > 0 || res.RequestIDs > 0:
			log.Info("swept", "sessions", res.Sessions, "request_ids", res.RequestIDs)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
