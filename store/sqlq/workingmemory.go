package sqlq

import (
	"context"
	"encoding/json"
	"errors"
	"math"

	"github.com/carryon-hub/carryon"
)

// GetWorkingMemory returns the current document and its memory version; an empty document and 0 when it
// was never written. ENOTFOUND when the session is not the owner's.
func (t *Tx) GetWorkingMemory(ctx context.Context, owner, sessionID string) (carryon.WorkingMemory, int64, error) {
	var doc *string
	var mv *int64
	err := t.Conn.QueryRow(ctx, `SELECT w.document, w.memory_version FROM sessions s
		LEFT JOIN working_memory w ON w.session_id = s.id
		WHERE s.id = ? AND s.owner_id = ?`, sessionID, owner).Scan(&doc, &mv)
	if errors.Is(err, ErrNoRows) {
		return nil, 0, NotFound("session", sessionID)
	} else if err != nil {
		return nil, 0, t.Wrap(err, "get memory")
	}
	var v int64
	if mv != nil {
		v = *mv
	}
	wm, err := decodeDoc(Text(doc))
	if err != nil {
		return nil, 0, t.Wrap(err, "decode working memory")
	}
	return wm, v, nil
}

// InsertWorkingMemoryRevision stores a revision and makes its document the current one. ENOTFOUND when
// the session is not the owner's; ECONFLICT when the memory version exists.
func (t *Tx) InsertWorkingMemoryRevision(ctx context.Context, owner string, r *carryon.WorkingMemoryRevision) error {
	if err := t.Writable(); err != nil {
		return err
	}
	if err := t.ownSession(ctx, owner, r.SessionID); err != nil {
		return err
	}
	doc, err := encodeDoc(r.Document)
	if err != nil {
		return err
	}
	_, err = t.Conn.Exec(ctx, `INSERT INTO memory_revisions (`+revisionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		r.SessionID, r.WorkingMemoryVersion, r.Version, NullText(r.Patch), doc, r.RunID, Micros(r.CreatedAt))
	if err != nil {
		return t.Conflict(err, "store memory revision", "memory version %d of session %s exists", r.WorkingMemoryVersion, r.SessionID)
	}
	_, err = t.Conn.Exec(ctx, `INSERT INTO working_memory (session_id, document, memory_version) VALUES (?, ?, ?)
		ON CONFLICT (session_id) DO UPDATE SET document = excluded.document, memory_version = excluded.memory_version`,
		r.SessionID, doc, r.WorkingMemoryVersion)
	return t.Wrap(err, "store memory")
}

const revisionCols = `session_id, memory_version, version, patch, document, run_id, created_at`

// GetWorkingMemoryRevision returns one revision by memory version. ENOTFOUND.
func (t *Tx) GetWorkingMemoryRevision(ctx context.Context, owner, sessionID string, workingMemoryVersion int64) (*carryon.WorkingMemoryRevision, error) {
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	revs, err := t.queryRevisions(ctx, `WHERE session_id = ? AND memory_version = ?`, sessionID, workingMemoryVersion)
	if err != nil {
		return nil, err
	}
	if len(revs) == 0 {
		return nil, carryon.Errorf(carryon.ENOTFOUND, "memory version %d of session %s not found", workingMemoryVersion, sessionID)
	}
	return revs[0], nil
}

// WorkingMemoryAtVersion returns the newest revision stored at a session version <= v, or nil.
func (t *Tx) WorkingMemoryAtVersion(ctx context.Context, owner, sessionID string, v int64) (*carryon.WorkingMemoryRevision, error) {
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	revs, err := t.queryRevisions(ctx, `WHERE session_id = ? AND version <= ? ORDER BY memory_version DESC LIMIT 1`, sessionID, v)
	if err != nil || len(revs) == 0 {
		return nil, err
	}
	return revs[0], nil
}

// ListWorkingMemoryRevisions returns up to limit revisions with memory version < before (0: no bound),
// newest first. A limit of zero or less means no limit.
func (t *Tx) ListWorkingMemoryRevisions(ctx context.Context, owner, sessionID string, before int64, limit int) ([]*carryon.WorkingMemoryRevision, error) {
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	if before <= 0 {
		before = math.MaxInt64
	}
	return t.queryRevisions(ctx, `WHERE session_id = ? AND memory_version < ? ORDER BY memory_version DESC LIMIT ?`,
		sessionID, before, Limit(limit))
}

func (t *Tx) queryRevisions(ctx context.Context, query string, args ...any) ([]*carryon.WorkingMemoryRevision, error) {
	return scanAll(t, ctx, "read memory revisions", func(row Row) (*carryon.WorkingMemoryRevision, error) {
		var r carryon.WorkingMemoryRevision
		var patch *string
		var doc string
		var created int64
		if err := row.Scan(&r.SessionID, &r.WorkingMemoryVersion, &r.Version, &patch, &doc, &r.RunID, &created); err != nil {
			return nil, err
		}
		var err error
		if r.Document, err = decodeDoc(doc); err != nil {
			return nil, err
		}
		r.Patch, r.CreatedAt = RawText(patch), FromMicros(created)
		return &r, nil
	}, `SELECT `+revisionCols+` FROM memory_revisions `+query, args...)
}

func encodeDoc(wm carryon.WorkingMemory) (string, error) {
	if wm == nil {
		return "{}", nil
	}
	b, err := json.Marshal(wm)
	if err != nil {
		return "", carryon.Errorf(carryon.EINVALID, "working memory is not JSON: %v", err)
	}
	return string(b), nil
}

func decodeDoc(doc string) (carryon.WorkingMemory, error) {
	wm := carryon.WorkingMemory{}
	if doc == "" {
		return wm, nil
	}
	if err := json.Unmarshal([]byte(doc), &wm); err != nil {
		return nil, err
	}
	return wm, nil
}
