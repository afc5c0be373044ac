package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// maxWorkingMemoryBytes bounds the working memory document: it is meant to be small.
const maxWorkingMemoryBytes = 256 << 10

// GetWorkingMemory returns the session's working memory and the versions it is at.
func (s *Service) GetWorkingMemory(ctx context.Context, id string) (*carryon.WorkingMemoryState, error) {
	var st *carryon.WorkingMemoryState
	err := s.read(ctx, func(tx store.Tx, own string, now time.Time) error {
		sess, err := tx.GetSession(ctx, own, id)
		if err != nil {
			return err
		}
		wm, mv, err := tx.GetWorkingMemory(ctx, own, id)
		if err != nil {
			return err
		}
		st = &carryon.WorkingMemoryState{SessionID: id, Version: sess.Version, WorkingMemoryVersion: mv, WorkingMemory: nonNil(wm)}
		return nil
	})
	return st, err
}

// PatchWorkingMemory applies a JSON Merge Patch to the working memory. A patch that changes
// nothing stores nothing and keeps the versions.
func (s *Service) PatchWorkingMemory(ctx context.Context, id string, in carryon.WorkingMemoryPatch) (*carryon.WorkingMemoryState, error) {
	patch, err := decodePatch(in.Patch)
	if err != nil {
		return nil, err
	}
	in.Patch = mustJSON(patch)
	key := in.RequestID
	in.RequestID = ""
	return Write(ctx, s, "memory.patch", id, key, in, func(tx store.Tx, own string, now time.Time) (*carryon.WorkingMemoryState, error) {
		sess, err := LoadWritable(ctx, tx, own, id, in.ExpectedVersion, in.Fence, now)
		if err != nil {
			return nil, err
		}
		st, changed, err := patchInTx(ctx, tx, sess, patch, fenceRun(in.Fence), now)
		if err != nil || !changed {
			return st, err
		}
		if err := Touch(ctx, tx, sess, now); err != nil {
			return nil, err
		}
		st.Version = sess.Version
		return st, nil
	})
}

// patchInTx applies a decoded merge patch to the working memory of a session loaded with
// LoadWritable, as the revision of the session's next version, and reports whether it changed
// the document. The caller moves the session to that version (Touch, or an append, which
// touches) in the same transaction; a patch that changes nothing stores nothing. The revision
// keeps the patch's effect (effectivePatch), not the patch as sent: a member that sets the value
// a key has already is dropped, so a client that sends its whole state each turn stores only
// what changed.
func patchInTx(ctx context.Context, tx store.Tx, sess *carryon.Session, patch map[string]any, runID string, now time.Time) (*carryon.WorkingMemoryState, bool, error) {
	cur, mv, err := tx.GetWorkingMemory(ctx, sess.OwnerID, sess.ID)
	if err != nil {
		return nil, false, err
	}
	next := carryon.WorkingMemory(carryon.MergePatch(map[string]any(cloneDoc(cur)), map[string]any(patch)).(map[string]any))
	doc := mustJSON(next)
	if len(doc) > maxWorkingMemoryBytes {
		return nil, false, carryon.Errorf(carryon.EINVALID, "the patched working memory would be %d bytes; the limit is %d", len(doc), maxWorkingMemoryBytes)
	}
	if bytes.Equal(doc, mustJSON(nonNil(cur))) {
		return &carryon.WorkingMemoryState{SessionID: sess.ID, Version: sess.Version, WorkingMemoryVersion: mv, WorkingMemory: nonNil(cur)}, false, nil
	}
	sess.WorkingMemoryVersion = mv + 1
	err = tx.InsertWorkingMemoryRevision(ctx, sess.OwnerID, &carryon.WorkingMemoryRevision{
		SessionID: sess.ID, WorkingMemoryVersion: mv + 1, Version: sess.Version + 1, Patch: mustJSON(effectivePatch(cur, patch)),
		Document: next, RunID: runID, CreatedAt: now,
	})
	if err != nil {
		return nil, false, err
	}
	return &carryon.WorkingMemoryState{SessionID: sess.ID, Version: sess.Version + 1, WorkingMemoryVersion: mv + 1, WorkingMemory: next}, true, nil
}

// PatchWorkingMemoryInTx applies a merge patch to the working memory of a session loaded with
// LoadWritable, as a revision of the session's next version linked to runID, and reports whether it
// changed the document. The caller moves the session to that version in the same transaction (an
// append does): the run manager stores a step's memory changes with its messages this way.
func PatchWorkingMemoryInTx(ctx context.Context, tx store.Tx, sess *carryon.Session, patch json.RawMessage, runID string, now time.Time) (*carryon.WorkingMemoryState, bool, error) {
	p, err := decodePatch(patch)
	if err != nil {
		return nil, false, err
	}
	return patchInTx(ctx, tx, sess, p, runID, now)
}

// PreviewWorkingMemory returns doc as it will be once the merge patches are applied in order,
// without storing anything (doc is not changed). It fails as the stored patch would: a patch that
// is not a JSON object, or a document over the size limit.
func PreviewWorkingMemory(doc carryon.WorkingMemory, patches ...json.RawMessage) (carryon.WorkingMemory, error) {
	next := map[string]any(cloneDoc(doc))
	for _, raw := range patches {
		p, err := decodePatch(raw)
		if err != nil {
			return nil, err
		}
		next = carryon.MergePatch(next, p).(map[string]any)
	}
	if n := len(mustJSON(next)); n > maxWorkingMemoryBytes {
		return nil, carryon.Errorf(carryon.EINVALID, "the patched working memory would be %d bytes; the limit is %d", n, maxWorkingMemoryBytes)
	}
	return carryon.WorkingMemory(next), nil
}

// WorkingMemoryHistory lists the working memory's revisions, newest first.
func (s *Service) WorkingMemoryHistory(ctx context.Context, id string, f carryon.RevisionFilter) (*carryon.RevisionPage, error) {
	before, err := position(f.Cursor, "before", f.BeforeWorkingMemoryVersion)
	if err != nil {
		return nil, err
	}
	limit, err := pageLimit(f.Limit)
	if err != nil {
		return nil, err
	}
	page := &carryon.RevisionPage{Items: []*carryon.WorkingMemoryRevision{}}
	err = s.read(ctx, func(tx store.Tx, own string, now time.Time) error {
		if _, err := tx.GetSession(ctx, own, id); err != nil {
			return err
		}
		items, err := tx.ListWorkingMemoryRevisions(ctx, own, id, before, limit+1)
		if err != nil {
			return err
		}
		// A page holds at most the read budget of documents and patches (a revision's document
		// may be 256 KiB): it stops before the revision that would go past it.
		if n := s.revisionsWithin(items[:min(len(items), limit)]); n < len(items) {
			items = items[:n]
			page.NextCursor = strconv.FormatInt(items[n-1].WorkingMemoryVersion, 10)
		}
		page.Items = items
		return nil
	})
	return page, err
}

// WorkingMemoryDiff compares two revisions of the working memory by memory version; 0 is the empty
// document before the first revision.
func (s *Service) WorkingMemoryDiff(ctx context.Context, id string, from, to int64) (*carryon.WorkingMemoryDiff, error) {
	if from < 0 || to < 0 {
		return nil, carryon.Errorf(carryon.EINVALID, "from and to must be memory versions (0 or more)")
	}
	var d *carryon.WorkingMemoryDiff
	err := s.read(ctx, func(tx store.Tx, own string, now time.Time) error {
		sess, err := tx.GetSession(ctx, own, id)
		if err != nil {
			return err
		}
		docs := [2]carryon.WorkingMemory{{}, {}}
		for i, v := range []int64{from, to} {
			if v > sess.WorkingMemoryVersion {
				return carryon.Errorf(carryon.EINVALID, "memory version %d does not exist; the latest is %d", v, sess.WorkingMemoryVersion)
			}
			if v == 0 {
				continue
			}
			rev, err := tx.GetWorkingMemoryRevision(ctx, own, id, v)
			if err != nil {
				return err
			}
			docs[i] = nonNil(rev.Document)
		}
		d = &carryon.WorkingMemoryDiff{From: from, To: to, Changes: diffDocs("", docs[0], docs[1], nil)}
		if d.Changes == nil {
			d.Changes = []carryon.WorkingMemoryEdit{}
		}
		return nil
	})
	return d, err
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called on values decoded from JSON
	}
	return b
}

func cloneDoc(wm carryon.WorkingMemory) carryon.WorkingMemory {
	var out carryon.WorkingMemory
	_ = json.Unmarshal(mustJSON(nonNil(wm)), &out)
	return out
}

// revisionsWithin returns how many of revs, from the first, fit in the read budget as answered
// (document and patch); at least one.
func (s *Service) revisionsWithin(revs []*carryon.WorkingMemoryRevision) int {
	left := s.cfg.MaxReadBytes
	for i, r := range revs {
		doc, _ := json.Marshal(r.Document)
		if left -= int64(len(doc)+len(r.Patch)) + 256; left < 0 && i > 0 {
			return i
		}
	}
	return len(revs)
}
