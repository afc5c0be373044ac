package sessions

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// Fork makes a new session that shares this one's history as it was at in.AtVersion. Nothing in
// the database is copied but the working memory document and the tombstones of the messages the
// parent had deleted by then (DeleteMessage), and of those it deleted later whose text is erased
// already (no session saw them any more): the fork reads its parent's messages up to ForkSeq. Once the fork is committed, the parent's workspace files are copied into the fork's
// as they are now (files are not versioned, so not as they were at in.AtVersion); a replay copies
// nothing. Forking reads the parent, so it works on closed and expired sessions too; the parent is
// not changed.
func (s *Service) Fork(ctx context.Context, id string, in carryon.ForkInput) (*carryon.Session, error) {
	if in.AtVersion < 0 {
		return nil, carryon.Errorf(carryon.EINVALID, "at_version must be positive, not %d", in.AtVersion)
	}
	if err := validTitle(in.Title); err != nil {
		return nil, err
	}
	key := in.RequestID
	in.RequestID = ""
	made := "" // the id this call gave its fork; a replay answers another one
	child, err := Write(ctx, s, "session.fork", id, key, in, func(tx store.Tx, own string, now time.Time) (*carryon.Session, error) {
		parent, err := tx.GetSession(ctx, own, id)
		if err != nil {
			return nil, err
		}
		if err := checkVersion(parent, in.ExpectedVersion); err != nil {
			return nil, err
		}
		at := in.AtVersion
		if at == 0 {
			at = parent.Version
		}
		if at > parent.Version {
			return nil, carryon.Errorf(carryon.EINVALID, "at_version %d is ahead of the session's version %d", at, parent.Version)
		}
		forkSeq := parent.LastSeq
		if at < parent.Version {
			if forkSeq, err = tx.SeqAtVersion(ctx, own, parent, at); err != nil {
				return nil, err
			}
		}
		title, derived := in.Title, false
		if title == "" {
			title, derived = parent.Title, parent.TitleDerived
		}
		child := &carryon.Session{
			ID: carryon.NewID(carryon.SessionIDPrefix), OwnerID: own, Title: title, TitleDerived: derived, Status: carryon.SessionActive,
			Version: 1, ParentID: parent.ID, ForkSeq: forkSeq, ForkVersion: at,
			CreatedAt: now, UpdatedAt: now, LastActiveAt: now,
			ExpiresAt:      now.Add(time.Duration(parent.IdleTTLSeconds) * time.Second),
			IdleTTLSeconds: parent.IdleTTLSeconds, MessageCount: forkSeq, LastSeq: forkSeq,
			Metadata: parent.Metadata, Agent: parent.Agent,
		}
		rev, err := tx.WorkingMemoryAtVersion(ctx, own, parent.ID, at)
		if err != nil {
			return nil, err
		}
		if rev != nil && len(rev.Document) > 0 {
			child.WorkingMemoryVersion = 1
		}
		if err := tx.InsertSession(ctx, child); err != nil {
			return nil, err
		}
		made = child.ID
		// The messages the parent had deleted at that version stay deleted in the fork.
		if n, err := tx.CopyMessageDeletions(ctx, own, child, at); err != nil {
			return nil, err
		} else if n > 0 {
			child.MessageCount -= n
			if err := tx.UpdateSession(ctx, child, child.Version); err != nil {
				return nil, err
			}
		}
		if err := tx.IndexFork(ctx, own, child, at); err != nil { // a fork is found by the text it shows
			return nil, err
		}
		if child.WorkingMemoryVersion == 1 {
			err := tx.InsertWorkingMemoryRevision(ctx, own, &carryon.WorkingMemoryRevision{
				SessionID: child.ID, WorkingMemoryVersion: 1, Version: 1, Patch: mustJSON(rev.Document),
				Document: rev.Document, CreatedAt: now,
			})
			if err != nil {
				return nil, err
			}
		}
		return child, nil
	})
	if err == nil && child.ID == made {
		s.copyWorkspace(child.ParentID, child.ID)
	}
	return child, err
}
