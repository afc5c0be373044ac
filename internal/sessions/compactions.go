package sessions

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// SummaryPlan prepares the summary message of a compaction (kind summary, its metadata the
// compaction's; package contextbuild's Builder.Compact through the session's agent profile). It
// writes nothing.
type SummaryPlan func(ctx context.Context) (carryon.NewMessage, error)

// compactInput is what a compaction's request id fingerprints (the summary the model writes
// is not input: a repeat answers the first one's).
type compactInput struct {
	KeepLast        int    `json:"keep_last"`
	Instructions    string `json:"instructions"`
	ExpectedVersion *int64 `json:"expected_version,omitempty"`
}

// Compact stores a compaction of the session: plan asks the summarizer (outside any
// transaction, so a slow model holds no lock), then one write appends its summary at the
// session's next version, with in's request id and expected version. Nothing is written when the
// plan fails (a summarizer that fails or times out leaves the history as it was). A repeat of the
// request id answers the first compaction without asking the summarizer again. EBUSY while the
// session has an active run (before the summarizer is asked, and again in the write), ECLOSED,
// EEXPIRED, EVERSION, EINVALID.
func (s *Service) Compact(ctx context.Context, id string, in carryon.CompactInput, plan SummaryPlan) (*carryon.Compaction, error) {
	switch {
	case in.KeepLast < 0:
		return nil, carryon.Errorf(carryon.EINVALID, "keep_last must not be negative, got %d", in.KeepLast)
	case len(in.Instructions) > carryon.MaxCompactInstructions:
		return nil, carryon.Errorf(carryon.EINVALID, "instructions are %d bytes, over the limit of %d", len(in.Instructions), carryon.MaxCompactInstructions)
	}
	key := in.RequestID
	input := compactInput{KeepLast: in.KeepLast, Instructions: in.Instructions, ExpectedVersion: in.ExpectedVersion}
	var msg carryon.NewMessage
	replay := false
	if key != "" {
		_, used, err := s.RequestIDUsed(ctx, key)
		if err != nil {
			return nil, err
		}
		replay = used
	}
	if !replay {
		err := s.read(ctx, func(tx store.Tx, own string, now time.Time) error {
			sess, err := LoadWritable(ctx, tx, own, id, in.ExpectedVersion, nil, now)
			if err != nil {
				return err
			}
			return idle(ctx, tx, own, sess)
		})
		if err != nil {
			return nil, err
		}
		if msg, err = plan(ctx); err != nil {
			return nil, err
		}
	}
	return write(ctx, s, "session.compact", id, key, input, nil, func(tx store.Tx, own string, now time.Time) (*carryon.Compaction, error) {
		if replay {
			// The record the check saw is gone (expired or forgotten) since: ask again.
			return nil, carryon.Errorf(carryon.ECONFLICT, "request id %q was used and is no longer kept; retry the compaction with a new one", key)
		}
		sess, err := LoadWritable(ctx, tx, own, id, in.ExpectedVersion, nil, now)
		if err != nil {
			return nil, err
		}
		if err := idle(ctx, tx, own, sess); err != nil {
			return nil, err
		}
		res, err := AppendInTx(ctx, tx, sess, []carryon.NewMessage{msg}, "", key, now)
		if err != nil {
			return nil, err
		}
		return carryon.CompactionOf(res.Messages[0]), nil
	})
}

// idle refuses with EBUSY a compaction of a session that has an active run: the run's next
// context would change under it.
func idle(ctx context.Context, tx store.Tx, own string, sess *carryon.Session) error {
	active, err := tx.ActiveRuns(ctx, own, sess.ID)
	if err != nil || len(active) == 0 {
		return err
	}
	e := carryon.Errorf(carryon.EBUSY, "session %s has an active run %s (%s); compact it once the run ended, or cancel the run", sess.ID, active[0].ID, active[0].Status)
	e.ActiveRunID, e.RetryAfterSeconds = active[0].ID, 1
	return e
}

// ListCompactions returns the session's compactions, oldest first: its summaries, inherited ones
// included (a fork sees those its parent had when it was made).
func (s *Service) ListCompactions(ctx context.Context, id string) (*carryon.CompactionPage, error) {
	page := &carryon.CompactionPage{Items: []*carryon.Compaction{}}
	err := s.read(ctx, func(tx store.Tx, own string, now time.Time) error {
		sess, err := tx.GetSession(ctx, own, id)
		if err != nil {
			return err
		}
		ms, err := tx.Summaries(ctx, own, sess)
		for _, m := range ms {
			page.Items = append(page.Items, carryon.CompactionOf(m))
		}
		return err
	})
	return page, err
}
