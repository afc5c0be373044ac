package sessions

import (
	"context"
	"log/slog"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// SweepResult counts what one sweep removed.
type SweepResult struct {
	// Sessions is how many sessions past the purge horizon (or the closed retention) were
	// deleted with everything in them.
	Sessions int
	// RequestIDs is how many expired request ids were forgotten.
	RequestIDs int64
	// OverLimit is how many sessions beyond MaxSessionsPerUser were deleted.
	OverLimit int
	// Forgotten is how many users whose forgetting had been cut off were finished.
	Forgotten int
	// OrphanWorkspaces is how many workspace directories of sessions that no longer exist were
	// removed (see OrphanGrace).
	OrphanWorkspaces int
	// StagedImports is how many staged workspaces of imports cut off by a crash were moved into
	// place (the session was stored) or removed (it was not).
	StagedImports int
}

// Sweep deletes every session that expired more than PurgeAfter ago, with everything in it (its
// workspace too, once the deletion committed), and forgets expired request ids. A closed session
// is not expired: it is kept until it is deleted, or, with a ClosedRetention, until that long
// after it was closed. With a MaxSessionsPerUser, it then deletes each user's least recently
// active sessions beyond it. First it finishes forgetting the users whose forget was cut off
// (ForgetMarked). Each session is deleted in its own transaction. Last it removes the workspace
// directories left over by sessions that no longer exist (OrphanGrace) and settles the files
// of imports cut off by a crash.
func (s *Service) Sweep(ctx context.Context) (SweepResult, error) {
	var res SweepResult
	var err, forgetErr error
	// A forget that fails (a workspace that cannot be removed) is reported, after the rest of
	// the sweep: it must not keep expired sessions from being purged.
	res.Forgotten, forgetErr = s.ForgetMarked(ctx)
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
			err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
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
	if res.OverLimit, err = s.sweepOverLimit(ctx); err != nil {
		return res, err
	}
	if res.OrphanWorkspaces, err = s.sweepOrphanWorkspaces(ctx); err != nil {
		return res, err
	}
	if res.StagedImports, err = s.sweepStagedImports(ctx); err != nil {
		return res, err
	}
	now := s.now()
	expired := false
	err = s.st.Read(ctx, func(tx store.Tx) error {
		var err error
		expired, err = tx.HasExpiredIdempotency(ctx, now)
		return err
	})
	if err == nil && expired { // look first: an idle server commits nothing
		err = s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			var err error
			res.RequestIDs, err = tx.SweepIdempotency(ctx, now)
			return err
		})
	}
	if err == nil {
		err = forgetErr
	}
	return res, err
}

// sweepOverLimit deletes, with everything in them, the sessions beyond MaxSessionsPerUser of
// each user, least recently active first, each in its own transaction that checks again that
// its owner is over the limit and that it was not active since it was selected.
func (s *Service) sweepOverLimit(ctx context.Context) (int, error) {
	max := s.cfg.MaxSessionsPerUser
	if max <= 0 {
		return 0, nil
	}
	n := 0
	for {
		var refs []store.SessionRef
		var seen map[string]time.Time
		err := s.st.Read(ctx, func(tx store.Tx) error {
			var err error
			if refs, err = tx.SessionsOverLimit(ctx, max, 100); err != nil {
				return err
			}
			seen = make(map[string]time.Time, len(refs))
			for _, ref := range refs {
				sess, err := tx.GetSession(ctx, ref.OwnerID, ref.ID)
				if err != nil {
					return err
				}
				seen[ref.ID] = sess.LastActiveAt
			}
			return nil
		})
		if err != nil {
			return n, err
		}
		progress := 0
		for _, ref := range refs {
			deleted := false
			err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				deleted = false
				sess, err := tx.GetSession(ctx, ref.OwnerID, ref.ID)
				if carryon.ErrorCode(err) == carryon.ENOTFOUND || (err == nil && !sess.LastActiveAt.Equal(seen[ref.ID])) {
					return nil // gone already, or active since
				} else if err != nil {
					return err
				}
				if count, err := tx.CountSessions(ctx, ref.OwnerID); err != nil || count <= int64(max) {
					return err
				}
				deleted = true
				return tx.DeleteSession(ctx, ref.OwnerID, ref.ID)
			})
			if err != nil {
				return n, err
			}
			if deleted {
				n++
				progress++
				s.removeWorkspace(ref.ID)
			}
		}
		if len(refs) < 100 || progress == 0 {
			return n, nil
		}
	}
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
		case res.Sessions > 0 || res.RequestIDs > 0 || res.OverLimit > 0 || res.Forgotten > 0:
			log.Info("swept", "sessions", res.Sessions, "request_ids", res.RequestIDs, "over_limit", res.OverLimit,
				"users_forgotten", res.Forgotten)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
