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
	// Sessions is how many sessions past the purge horizon (or the closed retention) were
	// deleted with everything in them.
	Sessions int
	// RequestIDs is how many expired request ids were forgotten.
	RequestIDs int64
}

// Sweep deletes every session that expired more than PurgeAfter ago, with everything in it (its
// workspace too, once the deletion committed), and forgets expired request ids. A closed session
// is not expired: it is kept until it is deleted, or, with a ClosedRetention, until that long
// after it was closed. Each session is deleted in its own transaction.
func (s *Service) Sweep(ctx context.Context) (SweepResult, error) {
	var res SweepResult
	q := s.purgeQuery(s.now())
	for {
		var refs []store.SessionRef
		err := s.st.Read(ctx, func(tx store.Tx) error {
			var err error
			refs, err = tx.PurgeableSessions(ctx, q)
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
				if carryon.ErrorCode(err) == carryon.ENOTFOUND || (err == nil && !purgeable(sess, q)) {
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
		if len(refs) < q.Limit {
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

// purgeQuery selects the sessions a sweep at now deletes: expired ones past the purge horizon,
// closed ones past the closed retention when there is one.
func (s *Service) purgeQuery(now time.Time) store.PurgeQuery {
	q := store.PurgeQuery{ExpiredBefore: now.Add(-s.cfg.PurgeAfter), Limit: 100}
	if s.cfg.ClosedRetention > 0 {
		q.ClosedBefore = now.Add(-s.cfg.ClosedRetention)
	}
	return q
}

// purgeable reports whether q still selects sess (it may have been restored or closed since).
func purgeable(sess *carryon.Session, q store.PurgeQuery) bool {
	if sess.Status == carryon.SessionClosed {
		return !q.ClosedBefore.IsZero() && sess.UpdatedAt.Before(q.ClosedBefore)
	}
	return sess.ExpiresAt.Before(q.ExpiredBefore)
}

// RunSweeper sweeps every interval until ctx is done, logging what it removed.
func (s *Service) RunSweeper(ctx context.Context, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		res, err := s.Sweep(ctx)
		if s.cfg.OnSweep != nil {
			s.cfg.OnSweep(res, err)
		}
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
