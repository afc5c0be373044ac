package runs

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// here is a worker of this process held for a run being started here: the start's transaction
// claims the new run for it (one transaction to start and claim a run, not two), and once that
// committed the run executes on it at once, without waiting for the runners' next look. Without
// a free worker, or without a Work loop in this process, it claims nothing and the runners (here
// or elsewhere) take the run as before.
type here struct {
	s   *Service
	ctx context.Context // the Work loop's; nil: nothing is held
	// What the last attempt of the transaction claimed (a transaction may run again: each
	// attempt overwrites it).
	run *carryon.Run
	seq int64
}

// reserve holds a worker for a run being started, when this process works runs and has one free.
func (s *Service) reserve() *here {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := &here{s: s}
	if s.work != nil && s.work.Err() == nil && s.cfg.Workers-len(s.running)-s.reserved > 0 {
		h.ctx = s.work
		s.reserved++
	}
	return h
}

// claim claims r, just started (queued) in tx, for the held worker, and returns it as it is then:
// running at attempt 1 with this process's lease and its run.started event, or as it was when
// nothing is held or the run cannot run yet (its session is busy, its owner at its limit of
// running runs).
func (h *here) claim(ctx context.Context, tx store.Tx, r *carryon.Run, now time.Time) (*carryon.Run, error) {
	h.run, h.seq = nil, 0
	if h.ctx == nil || r.Status != carryon.RunQueued {
		return r, nil
	}
	st := claimStats{takeovers: map[string]bool{}, started: map[string]int64{}}
	c, err := h.s.claim(ctx, tx, r, now, &st)
	switch {
	case err != nil:
		return nil, err
	case len(st.ended) > 0:
		return st.ended[0], nil // its profile went away since the start read it: the claim failed it
	case c == nil:
		return r, nil
	}
	h.run, h.seq = c, st.started[c.ID]
	return c, nil
}

// launch executes the run the committed start claimed, if any, on the held worker, and says
// whether there was one (else the runners are to look for it: Service.Wake).
func (h *here) launch() bool {
	if h.run == nil {
		return false
	}
	h.s.cfg.Telemetry.RunClaimed(h.run, false)
	h.s.notify.local(h.run.ID)
	ctx := h.ctx
	h.ctx = nil
	h.s.launch(ctx, h.run, h.seq, 1)
	return true
}

// release gives back the held worker when no run took it.
func (h *here) release() {
	if h.ctx == nil {
		return
	}
	h.s.mu.Lock()
	h.s.reserved--
	h.s.mu.Unlock()
	h.ctx = nil
}
