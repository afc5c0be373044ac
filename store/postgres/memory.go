package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"math"

	"github.com/carryon-hub/carryon"
	"github.com/jackc/pgx/v5"
)

// GetMemory returns the current document and its memory version; an empty document and 0 when it
// was never written. ENOTFOUND when the session is not the owner's.
func (t *tx) GetMemory(ctx context.Context, owner, sessionID string) (carryon.WorkingMemory, int64, error) {
	var doc *string
	var mv *int64
	err := t.tx.QueryRow(ctx, `SELECT w.document, w.memory_version FROM sessions s
		LEFT JOIN working_memory w ON w.session_id = s.id
		WHERE s.id = $1 AND s.owner_id = $2`, sessionID, owner).Scan(&doc, &mv)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, notFound("session", sessionID)
	} else if err != nil {
		return nil, 0, wrap(err, "get memory")
	}
	var v int64
	if mv != nil {
		v = *mv
	}
	var d string
	if doc != nil {
		d = *doc
	}
	wm, err := decodeDoc(d)
	return wm, v, err
}

// InsertMemoryRevision stores a revision and makes its document the current one. ENOTFOUND when
// the session is not the owner's; ECONFLICT when the memory version exists.
func (t *tx) InsertMemoryRevision(ctx context.Context, owner string, r *carryon.MemoryRevision) error {
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
	_, err = t.tx.Exec(ctx, `INSERT INTO memory_revisions (session_id, memory_version, version, patch,
		document, run_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		r.SessionID, r.MemoryVersion, r.Version, nullText(r.Patch), doc, r.RunID, micros(r.CreatedAt))
	if err != nil {
		return conflict(err, "memory version %d of session %s exists", r.MemoryVersion, r.SessionID)
	}
	_, err = t.tx.Exec(ctx, `INSERT INTO working_memory (session_id, document, memory_version) VALUES ($1, $2, $3)
		ON CONFLICT (session_id) DO UPDATE SET document = EXCLUDED.document, memory_version = EXCLUDED.memory_version`,
		r.SessionID, doc, r.MemoryVersion)
	return wrap(err, "store memory")
}

const revisionCols = `session_id, memory_version, version, patch, document, run_id, created_at`

// GetMemoryRevision returns one revision by memory version. ENOTFOUND.
func (t *tx) GetMemoryRevision(ctx context.Context, owner, sessionID string, memoryVersion int64) (*carryon.MemoryRevision, error) {
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	revs, err := t.queryRevisions(ctx, `WHERE session_id = $1 AND memory_version = $2`, sessionID, memoryVersion)
	if err != nil {
		return nil, err
	}
	if len(revs) == 0 {
		return nil, carryon.Errorf(carryon.ENOTFOUND, "memory version %d of session %s not found", memoryVersion, sessionID)
	}
	return revs[0], nil
}

// MemoryAtVersion returns the newest revision stored at a session version <= v, or nil.
func (t *tx) MemoryAtVersion(ctx context.Context, owner, sessionID string, v int64) (*carryon.MemoryRevision, error) {
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	revs, err := t.queryRevisions(ctx, `WHERE session_id = $1 AND version <= $2 ORDER BY memory_version DESC LIMIT 1`, sessionID, v)
	if err != nil || len(revs) == 0 {
		return nil, err
	}
	return revs[0], nil
}

// ListMemoryRevisions returns up to limit revisions with memory version < before (0: no bound),
// newest first. A limit of zero or less means no limit.
func (t *tx) ListMemoryRevisions(ctx context.Context, owner, sessionID string, before int64, limit int) ([]*carryon.MemoryRevision, error) {
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	if before <= 0 {
		before = math.MaxInt64
	}
	return t.queryRevisions(ctx, `WHERE session_id = $1 AND memory_version < $2 ORDER BY memory_version DESC LIMIT $3`,
		sessionID, before, limitArg(limit))
}

func (t *tx) queryRevisions(ctx context.Context, query string, args ...any) ([]*carryon.MemoryRevision, error) {
	rows, err := t.tx.Query(ctx, `SELECT `+revisionCols+` FROM memory_revisions `+query, args...)
	if err != nil {
		return nil, wrap(err, "read memory revisions")
	}
	defer rows.Close()
	var out []*carryon.MemoryRevision
	for rows.Next() {
		var r carryon.MemoryRevision
		var patch *string
		var doc string
		var created int64
		if err := rows.Scan(&r.SessionID, &r.MemoryVersion, &r.Version, &patch, &doc, &r.RunID, &created); err != nil {
			return nil, wrap(err, "read memory revisions")
		}
		if r.Document, err = decodeDoc(doc); err != nil {
			return nil, err
		}
		r.Patch, r.CreatedAt = rawText(patch), fromMicros(created)
		out = append(out, &r)
	}
	return out, wrap(rows.Err(), "read memory revisions")
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
		return nil, wrap(err, "decode working memory")
	}
	return wm, nil
}
