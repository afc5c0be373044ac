package sessions

import (
	"context"
	"slices"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/bundle"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
)

// exportPage is how many rows an export reads a query.
const exportPage = 1000

// Export returns the bundle of the caller's session (package bundle, docs/EXPORT.md): every row
// the session owns, read in one read transaction so that it is one consistent state, then its
// workspace files (which are not versioned: as they are when they are read). A fork's bundle
// holds its own rows and a reference to its parent, not the parent's rows. ENOTFOUND for a
// session that is not the caller's; ETOOLARGE when the bundle would pass bundle.MaxBytes.
func (s *Service) Export(ctx context.Context, id string) ([]byte, error) {
	var enc *bundle.Encoder
	err := s.read(ctx, func(tx store.Tx, own string, now time.Time) error {
		sess, err := tx.GetSession(ctx, own, id)
		if err != nil {
			return err
		}
		enc = bundle.NewEncoder(sess.ID, now)
		return exportRows(ctx, tx, own, sess, enc)
	})
	if err != nil {
		return nil, err
	}
	if dir := s.workspaceDir(id); dir != "" {
		files, err := workspace.ReadAll(dir, bundle.MaxBytes)
		if err != nil {
			return nil, carryon.Errorf(carryon.ETOOLARGE, "export session %s: %v", id, err)
		}
		for _, f := range files {
			enc.Add(bundle.Line{Kind: bundle.KindFile, File: &bundle.File{Path: f.Path, Mode: uint32(f.Mode), Data: f.Data}})
		}
	}
	return enc.Finish()
}

// exportRows adds the rows of sess to enc, kind by kind in the bundle's order.
func exportRows(ctx context.Context, tx store.Tx, own string, sess *carryon.Session, enc *bundle.Encoder) error {
	bs := bundle.SessionOf(sess)
	b, err := tx.SessionBudget(ctx, own, sess.ID)
	if err != nil {
		return err
	}
	bs.Budget = b
	enc.Add(bundle.Line{Kind: bundle.KindSession, Session: bs})
	if sess.ParentID != "" {
		enc.Add(bundle.Line{Kind: bundle.KindFork, Fork: &bundle.Fork{ParentID: sess.ParentID, ForkSeq: sess.ForkSeq, ForkVersion: sess.ForkVersion}})
	}
	for after := int64(0); ; {
		msgs, err := tx.OwnMessages(ctx, own, sess, after, exportPage)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			enc.Add(bundle.Line{Kind: bundle.KindMessage, Message: m})
			after = m.Seq
		}
		if len(msgs) < exportPage {
			break
		}
	}
	tombs, err := tx.MessageTombstones(ctx, own, sess, 0, sess.LastSeq)
	if err != nil {
		return err
	}
	for _, t := range tombs {
		enc.Add(bundle.Line{Kind: bundle.KindTombstone, Tombstone: &bundle.Tombstone{Seq: t.Seq, Version: t.Version, Role: t.Role, Kind: t.Kind, CreatedAt: t.CreatedAt}})
	}
	var revs []*carryon.WorkingMemoryRevision
	for before := int64(0); ; {
		page, err := tx.ListWorkingMemoryRevisions(ctx, own, sess.ID, before, exportPage)
		if err != nil {
			return err
		}
		revs = append(revs, page...)
		if len(page) < exportPage {
			break
		}
		before = page[len(page)-1].WorkingMemoryVersion
	}
	slices.Reverse(revs)
	for _, r := range revs {
		enc.Add(bundle.Line{Kind: bundle.KindRevision, Revision: r})
	}
	var runs []*carryon.Run
	for q := (store.RunQuery{Limit: exportPage}); ; {
		page, err := tx.ListRuns(ctx, own, sess.ID, q)
		if err != nil {
			return err
		}
		runs = append(runs, page...)
		if len(page) < exportPage {
			break
		}
		q.AfterCreated, q.AfterID = page[len(page)-1].CreatedAt, page[len(page)-1].ID
	}
	slices.Reverse(runs) // oldest first
	for _, r := range runs {
		enc.Add(bundle.Line{Kind: bundle.KindRun, Run: bundle.RunOf(r)})
	}
	for _, r := range runs {
		acts, err := tx.ListActions(ctx, own, r.ID)
		if err != nil {
			return err
		}
		for _, a := range acts {
			enc.Add(bundle.Line{Kind: bundle.KindAction, Action: a})
		}
	}
	for _, r := range runs {
		for after := int64(0); ; {
			evs, err := tx.EventsAfter(ctx, own, r.ID, after, exportPage)
			if err != nil {
				return err
			}
			for _, e := range evs {
				enc.Add(bundle.Line{Kind: bundle.KindEvent, Event: e})
				after = e.Seq
			}
			if len(evs) == 0 {
				break
			}
		}
	}
	return nil
}
