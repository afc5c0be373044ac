package extraction

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// Idle extraction: the sessions of a profile with memory_extraction.idle_after are learned from
// once they have been idle that long, by one instance at a time (the job lease), as their owners.
const (
	idleJob   = "memory.extract_idle"
	idleLease = 2 * time.Minute
	// IdleHorizon is how long after idle_after a session that was never learned from is still
	// picked up (a server that was down longer than that leaves its turns to a POST extract).
	IdleHorizon = 24 * time.Hour
	idlePage    = 50
	// idleTries is how often one idle session (at one last activity) is tried before a pass leaves
	// it alone: a model that keeps failing is not called for it at every pass.
	idleTries = 3
)

// WithIdle sets the profiles whose sessions are learned from when idle, each with how long a
// session must have been idle, and the logger of the passes; it returns s.
func (s *Service) WithIdle(agents map[string]time.Duration, log *slog.Logger) *Service {
	s.idle, s.log = agents, log
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// ExtractIdle makes one pass: every active session of an idle-learning profile whose last write
// is idle_after old (and at most IdleHorizon older) and that has turns after its mark is learned
// from as its owner, least recently active first. It holds the job's lease for the pass (another
// instance's running lease: it does nothing) and renews it before each session. It returns how
// many sessions it learned from; a failed extraction is logged and tried again by a later pass
// (idleTries times at most).
func (s *Service) ExtractIdle(ctx context.Context, holder string) (int, error) {
	if len(s.idle) == 0 {
		return 0, nil
	}
	claim := func() (bool, error) {
		var ok bool
		err := s.st.Write(ctx, func(_ context.Context, tx store.Tx) error {
			var err error
			_, ok, err = tx.ClaimJob(ctx, idleJob, holder, s.now(), idleLease)
			return err
		})
		return ok, err
	}
	if ok, err := claim(); err != nil || !ok {
		return 0, err
	}
	done := 0
	for _, agent := range slices.Sorted(maps.Keys(s.idle)) {
		now := s.now().UTC()
		q := store.IdleQuery{Agent: agent, Before: now.Add(-s.idle[agent]), Since: now.Add(-s.idle[agent] - IdleHorizon), Limit: idlePage}
		for {
			var page []store.IdleSession
			if err := s.st.Read(ctx, func(tx store.Tx) (err error) { page, err = tx.IdleUnextracted(ctx, q); return err }); err != nil {
				return done, err
			}
			for _, sess := range page {
				if ok, err := claim(); err != nil || !ok {
					return done, err
				}
				if s.learnIdle(ctx, sess) {
					done++
				}
			}
			if len(page) < q.Limit {
				break
			}
			q.AfterActive, q.AfterID = page[len(page)-1].LastActiveAt, page[len(page)-1].ID
		}
	}
	return done, nil
}

// learnIdle extracts one idle session as its owner and reports whether it did.
func (s *Service) learnIdle(ctx context.Context, sess store.IdleSession) bool {
	try := sess.ID + "@" + sess.LastActiveAt.String()
	s.mu.Lock()
	if s.tries[try] >= idleTries {
		s.mu.Unlock()
		return false
	}
	s.mu.Unlock()
	out, err := s.Extract(carryon.NewContextWithUser(ctx, &carryon.User{ID: sess.OwnerID}), sess.ID)
	if err != nil {
		if ctx.Err() == nil {
			s.mu.Lock()
			if len(s.tries) > 10000 {
				clear(s.tries)
			}
			s.tries[try]++
			s.mu.Unlock()
			s.log.Warn("learning facts from an idle session failed; a later pass tries again", "session_id", sess.ID, "err", err)
		}
		return false
	}
	s.log.Info("learned facts from an idle session", "session_id", sess.ID, "from_seq", out.FromSeq, "to_seq", out.ToSeq, "facts", len(out.Facts))
	return true
}

// RunIdle makes a pass every interval (1 minute when 0) until ctx is done.
func (s *Service) RunIdle(ctx context.Context, holder string, interval time.Duration) {
	if len(s.idle) == 0 {
		return
	}
	if interval <= 0 {
		interval = time.Minute
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := s.ExtractIdle(ctx, holder); err != nil && ctx.Err() == nil {
			s.log.Error("idle extraction pass", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
