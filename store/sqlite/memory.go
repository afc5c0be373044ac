package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/carryon-hub/carryon"
)

// GetMemory returns the current document and its memory version; an empty document and 0 when it
// was never written. ENOTFOUND when the session is not the owner's.
func (t *tx) GetMemory(ctx context.Context, owner, sessionID string) (carryon.WorkingMemory, int64, error) {
	var doc string
	var mv int64
	err := t.tx.QueryRowContext(ctx, `SELECT w.document, w.memory_version FROM sessions s
		LEFT JOIN working_memory w ON w.session_id = s.id
		WHERE s.id = ? AND s.owner_id = ?`, sessionID, owner).Scan(&nullable{&doc}, &nullable{&mv})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, notFound("session", sessionID)
	} else if err != nil {
		return nil, 0, wrap(err, "get memory")
	}
	wm, err := decodeDoc(doc)
	return wm, mv, err
}

// InsertMemoryRevision stores a revision and makes its document the current one. ENOTFOUND when
// the session is not the owner's; ECONFLICT when the memory version exists.
func (t *tx) InsertMemoryRevision(ctx context.Context, owner string, r *carryon.MemoryRevision) error {
	if err := t.Writable(); err != nil {
		return err
	}
	if _, err := t.ownLink(ctx, owner, r.SessionID); err != nil {
		return err
	}
	doc, err := encodeDoc(r.Document)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO memory_revisions (session_id, memory_version, version, patch,
		document, run_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		r.SessionID, r.MemoryVersion, r.Version, nullText(r.Patch), doc, r.RunID, micros(r.CreatedAt))
	if err != nil {
		return conflict(err, "memory version %d of session %s exists", r.MemoryVersion, r.SessionID)
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO working_memory (session_id, document, memory_version) VALUES (?, ?, ?)
		ON CONFLICT (session_id) DO UPDATE SET document = excluded.document, memory_version = excluded.memory_version`,
		r.SessionID, doc, r.MemoryVersion)
	return wrap(err, "store memory")
}

const revisionCols = `session_id, memory_version, version, patch, document, run_id, created_at`

// GetMemoryRevision returns one revision by memory version. ENOTFOUND.
func (t *tx) GetMemoryRevision(ctx context.Context, owner, sessionID string, memoryVersion int64) (*carryon.MemoryRevision, error) {
	if _, err := t.ownLink(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	revs, err := t.queryRevisions(ctx, `WHERE session_id = ? AND memory_version = ?`, sessionID, memoryVersion)
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
	if _, err := t.ownLink(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	revs, err := t.queryRevisions(ctx, `WHERE session_id = ? AND version <= ? ORDER BY memory_version DESC LIMIT 1`, sessionID, v)
	if err != nil || len(revs) == 0 {
		return nil, err
	}
	return revs[0], nil
}

// ListMemoryRevisions returns up to limit revisions with memory version < before (0: no bound),
// newest first. A limit of zero or less means no limit.
func (t *tx) ListMemoryRevisions(ctx context.Context, owner, sessionID string, before int64, limit int) ([]*carryon.MemoryRevision, error) {
	if _, err := t.ownLink(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	if before <= 0 {
		before = 1<<63 - 1
	}
	return t.queryRevisions(ctx, `WHERE session_id = ? AND memory_version < ? ORDER BY memory_version DESC LIMIT ?`,
		sessionID, before, limitArg(limit))
}

func (t *tx) queryRevisions(ctx context.Context, query string, args ...any) ([]*carryon.MemoryRevision, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT `+revisionCols+` FROM memory_revisions `+query, args...)
	if err != nil {
		return nil, wrap(err, "read memory revisions")
	}
	defer rows.Close()
	var out []*carryon.MemoryRevision
	for rows.Next() {
		var r carryon.MemoryRevision
		var patch sql.NullString
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

// nullable scans a possibly NULL column into a plain value, leaving it zero for NULL.
type nullable struct{ dst any }

func (n *nullable) Scan(src any) error {
	if src == nil {
		return nil
	}
	switch d := n.dst.(type) {
	case *string:
		var s sql.NullString
		if err := s.Scan(src); err != nil {
			return err
		}
		*d = s.String
	case *int64:
		var i sql.NullInt64
		if err := i.Scan(src); err != nil {
			return err
		}
		*d = i.Int64
	}
	return nil
}
