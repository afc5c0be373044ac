package sessions

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// ContextSnapshot reads what one context build needs, in one read transaction: the session (the
// caller's own) with its working memory and last req.Messages messages, its req.Actions most
// recent tool calls, and the caller's req.LongTermItems long-term memory items most relevant to
// req.LongTermQuery of that view. The parts therefore describe the session at one version, and a
// build costs one round of reads, O(window).
func (s *Service) ContextSnapshot(ctx context.Context, id string, req carryon.ContextSnapshotRequest) (*carryon.ContextSnapshot, error) {
	switch {
	case req.Messages < 1 || req.Messages > carryon.MaxMessageWindow:
		return nil, carryon.Errorf(carryon.EINVALID, "messages must be between 1 and %d", carryon.MaxMessageWindow)
	case req.Actions < 0:
		return nil, carryon.Errorf(carryon.EINVALID, "actions must not be negative")
	case req.LongTermItems < 0 || req.LongTermItems > carryon.MaxLongTermSearchLimit:
		return nil, carryon.Errorf(carryon.EINVALID, "long-term items must be between 0 and %d", carryon.MaxLongTermSearchLimit)
	}
	snap := &carryon.ContextSnapshot{}
	query, recall := "", false
	err := s.read(ctx, func(tx store.Tx, own string, now time.Time) error {
		var err error
		if snap.View, err = readView(ctx, tx, own, id, req.Messages, now); err != nil {
			return err
		}
		if req.Actions > 0 {
			if snap.Actions, err = tx.RecentActions(ctx, own, id, req.Actions); err != nil {
				return err
			}
		}
		if req.LongTermItems > 0 && snap.View.OwnerID == own {
			if req.LongTermQuery != nil {
				query = req.LongTermQuery(snap.View)
			}
			if recall = s.recall != nil; recall {
				return nil
			}
			snap.LongTerm, err = tx.SearchLongTermItems(ctx, own, store.LongTermSearchQuery{Text: query, Now: now, Limit: req.LongTermItems})
			if err != nil {
				return err
			}
			store.RelativeScores(snap.LongTerm)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if recall {
		own := carryon.NewContextWithUser(ctx, &carryon.User{ID: snap.View.OwnerID})
		res, err := s.recall.Search(own, carryon.LongTermSearch{Query: clipQuery(query), Limit: req.LongTermItems})
		switch {
		case err == nil:
			snap.LongTerm = res.Items
		case ctx.Err() != nil:
			return nil, ctx.Err()
		default: // the context goes on without memory rather than fail the run
			s.cfg.Logger.Warn("context built without long-term memory: the search failed", "session_id", id, "err", err)
		}
	}
	return snap, nil
}

// clipQuery bounds the text a context build searches long-term memory with (a long message is
// searched by its start), at a UTF-8 boundary.
func clipQuery(q string) string {
	const maxQuery = 4 << 10
	if len(q) <= maxQuery {
		return q
	}
	q = q[:maxQuery]
	for len(q) > 0 && !utf8.ValidString(q) {
		q = q[:len(q)-1]
	}
	return q
}
