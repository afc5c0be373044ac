package sqlq

import (
	"bytes"
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
		t.rememberDoc(sessionID, *doc, v)
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
	key, err := t.ownKey(ctx, owner, r.SessionID)
	if err != nil {
		return err
	}
	doc, err := encodeDoc(r.Document)
	if err != nil {
		return err
	}
	stored, err := t.revisionDocument(ctx, r, doc)
	if err != nil {
		return err
	}
	_, err = t.Conn.Exec(ctx, `INSERT INTO memory_revisions (`+revisionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		key, r.WorkingMemoryVersion, r.Version, NullText(r.Patch), stored, r.RunID, Micros(r.CreatedAt))
	if err != nil {
		return t.Conflict(err, "store memory revision", "memory version %d of session %s exists", r.WorkingMemoryVersion, r.SessionID)
	}
	_, err = t.Conn.Exec(ctx, `INSERT INTO working_memory (session_id, document, memory_version) VALUES (?, ?, ?)
		ON CONFLICT (session_id) DO UPDATE SET document = excluded.document, memory_version = excluded.memory_version`,
		r.SessionID, doc, r.WorkingMemoryVersion)
	if err != nil {
		return t.Wrap(err, "store memory")
	}
	t.rememberDoc(r.SessionID, doc, r.WorkingMemoryVersion)
	return nil
}

// revisionCols are the columns of a memory_revisions row; like a message, a revision names its
// session by its key (see messageCols).
const revisionCols = `session_key, memory_version, version, patch, document, run_id, created_at`

// snapshotEvery is how often a revision stores its whole document: memory versions 1, 1 +
// snapshotEvery, 1 + 2·snapshotEvery, … do; the others store only their patch, and reading one
// applies at most snapshotEvery-1 patches to the snapshot before it.
const snapshotEvery = 16

// revisionDocument returns what the revision r, whose whole document is doc, stores as its
// document: nil (only its patch) when its patch applied to the current document (the previous
// memory version) gives doc exactly, doc itself when r is a snapshot or the patch does not
// reproduce it (a revision written by other means than a patch).
func (t *Tx) revisionDocument(ctx context.Context, r *carryon.WorkingMemoryRevision, doc string) (*string, error) {
	if r.WorkingMemoryVersion%snapshotEvery == 1 || len(r.Patch) == 0 {
		return &doc, nil
	}
	prev, mv, ok := t.rememberedDoc(r.SessionID)
	if !ok {
		err := t.Conn.QueryRow(ctx, `SELECT document, memory_version FROM working_memory WHERE session_id = ?`, r.SessionID).Scan(&prev, &mv)
		if errors.Is(err, ErrNoRows) {
			return &doc, nil
		} else if err != nil {
			return nil, t.Wrap(err, "read memory")
		}
	}
	if mv != r.WorkingMemoryVersion-1 {
		return &doc, nil
	}
	if next, err := applyPatch(prev, r.Patch); err != nil || next != doc {
		return &doc, nil
	}
	return nil, nil
}

// GetWorkingMemoryRevision returns one revision by memory version. ENOTFOUND.
func (t *Tx) GetWorkingMemoryRevision(ctx context.Context, owner, sessionID string, workingMemoryVersion int64) (*carryon.WorkingMemoryRevision, error) {
	key, err := t.ownKey(ctx, owner, sessionID)
	if err != nil {
		return nil, err
	}
	revs, err := t.queryRevisions(ctx, sessionID, key, `AND memory_version = ?`, workingMemoryVersion)
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
	key, err := t.ownKey(ctx, owner, sessionID)
	if err != nil {
		return nil, err
	}
	revs, err := t.queryRevisions(ctx, sessionID, key, `AND version <= ? ORDER BY memory_version DESC LIMIT 1`, v)
	if err != nil || len(revs) == 0 {
		return nil, err
	}
	return revs[0], nil
}

// ListWorkingMemoryRevisions returns up to limit revisions with memory version < before (0: no bound),
// newest first. A limit of zero or less means no limit.
func (t *Tx) ListWorkingMemoryRevisions(ctx context.Context, owner, sessionID string, before int64, limit int) ([]*carryon.WorkingMemoryRevision, error) {
	key, err := t.ownKey(ctx, owner, sessionID)
	if err != nil {
		return nil, err
	}
	if before <= 0 {
		before = math.MaxInt64
	}
	return t.queryRevisions(ctx, sessionID, key, `AND memory_version < ? ORDER BY memory_version DESC`+limitArg,
		before, Limit(limit))
}

// queryRevisions reads the revisions of the session id, whose key is key, that the conditions
// and order of query (after "WHERE session_key = ?") select.
func (t *Tx) queryRevisions(ctx context.Context, id string, key int64, query string, args ...any) ([]*carryon.WorkingMemoryRevision, error) {
	var docs []*string
	revs, err := scanAll(t, ctx, "read memory revisions", func(row Row) (*carryon.WorkingMemoryRevision, error) {
		r := carryon.WorkingMemoryRevision{SessionID: id}
		var patch, doc *string
		var created, k int64
		if err := row.Scan(&k, &r.WorkingMemoryVersion, &r.Version, &patch, &doc, &r.RunID, &created); err != nil {
			return nil, err
		}
		docs = append(docs, doc)
		r.Patch, r.CreatedAt = RawText(patch), FromMicros(created)
		return &r, nil
	}, `SELECT `+revisionCols+` FROM memory_revisions WHERE session_key = ? `+query, append([]any{key}, args...)...)
	if err != nil {
		return nil, err
	}
	if err := t.replayRevisions(ctx, key, revs, docs); err != nil {
		return nil, err
	}
	for i, r := range revs {
		if r.Document, err = decodeDoc(*docs[i]); err != nil {
			return nil, t.Wrap(err, "decode memory revision")
		}
	}
	return revs, nil
}

// replayRevisions fills in the documents of revs (of the session whose key is key) that stored only their patch
// (nil in docs): it reads the revisions from the snapshot at or before the oldest of them up to
// the newest, in one query, and applies their patches in order.
func (t *Tx) replayRevisions(ctx context.Context, key int64, revs []*carryon.WorkingMemoryRevision, docs []*string) error {
	lo, hi := int64(math.MaxInt64), int64(0)
	for i, r := range revs {
		if docs[i] == nil {
			lo, hi = min(lo, r.WorkingMemoryVersion), max(hi, r.WorkingMemoryVersion)
		}
	}
	if hi == 0 {
		return nil
	}
	id := revs[0].SessionID
	rows, err := t.Conn.Query(ctx, `SELECT memory_version, patch, document FROM memory_revisions
		WHERE session_key = ? AND memory_version <= ? AND memory_version >= (SELECT MAX(memory_version)
		FROM memory_revisions WHERE session_key = ? AND memory_version <= ? AND document IS NOT NULL)
		ORDER BY memory_version`, key, hi, key, lo)
	if err != nil {
		return t.Wrap(err, "replay memory revisions")
	}
	defer rows.Close()
	replayed := map[int64]string{}
	cur, started := "", false
	for rows.Next() {
		var mv int64
		var patch, doc *string
		if err := rows.Scan(&mv, &patch, &doc); err != nil {
			return t.Wrap(err, "replay memory revisions")
		}
		switch {
		case doc != nil:
			cur, started = *doc, true
		case started:
			if cur, err = applyPatch(cur, RawText(patch)); err != nil {
				return t.Wrap(err, "replay memory revisions")
			}
		}
		replayed[mv] = cur
	}
	if err := rows.Err(); err != nil {
		return t.Wrap(err, "replay memory revisions")
	}
	for i, r := range revs {
		if docs[i] != nil {
			continue
		}
		doc, ok := replayed[r.WorkingMemoryVersion]
		if !ok || !started {
			return carryon.Errorf(carryon.EINTERNAL, "memory version %d of session %s has no snapshot before it", r.WorkingMemoryVersion, id)
		}
		docs[i] = &doc
	}
	return nil
}

// applyPatch applies the JSON Merge Patch (RFC 7396) patch to the document doc (stored text) and
// returns the result as encodeDoc writes it. Numbers stay as written (json.Number).
func applyPatch(doc string, patch []byte) (string, error) {
	var target, p any
	if doc != "" {
		if err := decodeNumbers([]byte(doc), &target); err != nil {
			return "", err
		}
	}
	if err := decodeNumbers(patch, &p); err != nil {
		return "", err
	}
	b, err := json.Marshal(carryon.MergePatch(target, p))
	return string(b), err
}

func decodeNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
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
