package sqlq

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

const sessionCols = `id, owner_id, title, status, version, parent_id, fork_seq, fork_version, created_at,
	updated_at, last_active_at, expires_at, idle_ttl_seconds, message_count, last_seq, memory_version, metadata, agent, external_id, title_derived`

func scanSession(r Row) (*carryon.Session, error) { return scanSessionAnd(r) }

// scanSessionAnd reads a row of sessionCols, then the columns after them into extra.
func scanSessionAnd(r Row, extra ...any) (*carryon.Session, error) {
	var s carryon.Session
	var parent, meta, ext *string
	var status string
	var created, updated, active, expires, derived int64
	dest := append([]any{&s.ID, &s.OwnerID, &s.Title, &status, &s.Version, &parent, &s.ForkSeq, &s.ForkVersion,
		&created, &updated, &active, &expires, &s.IdleTTLSeconds, &s.MessageCount, &s.LastSeq,
		&s.WorkingMemoryVersion, &meta, &s.Agent, &ext, &derived}, extra...)
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	s.Status, s.ParentID = carryon.SessionStatus(status), Text(parent)
	s.CreatedAt, s.UpdatedAt = FromMicros(created), FromMicros(updated)
	s.LastActiveAt, s.ExpiresAt = FromMicros(active), FromMicros(expires)
	s.Metadata, s.ExternalID, s.TitleDerived = RawText(meta), Text(ext), derived != 0
	return &s, nil
}

// InsertSession stores a new session row, with a new key (Dialect.RandomSessionKeys; a random
// key that is taken already, a chance of one in 2^63 per session stored, is drawn again). ECONFLICT when
// the id exists or the owner has a session with the same external id; ENOTFOUND when ParentID
// names no session.
func (t *Tx) InsertSession(ctx context.Context, s *carryon.Session) error {
	if err := t.Writable(); err != nil {
		return err
	}
	var err error
	for try := 0; ; try++ {
		key, args := serialSessionKey, []any{}
		if t.d.RandomSessionKeys {
			key, args = "?", []any{rand.Int64N(math.MaxInt64) + 1}
		}
		var n int64
		n, err = t.Conn.Exec(ctx, `INSERT INTO sessions (`+sessionCols+`, session_key)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, `+key+`) ON CONFLICT (session_key) DO NOTHING`,
			append([]any{s.ID, s.OwnerID, s.Title, string(s.Status), s.Version, NullText(s.ParentID), s.ForkSeq, s.ForkVersion,
				Micros(s.CreatedAt), Micros(s.UpdatedAt), Micros(s.LastActiveAt), Micros(s.ExpiresAt),
				s.IdleTTLSeconds, s.MessageCount, s.LastSeq, s.WorkingMemoryVersion, NullText(s.Metadata), s.Agent, NullText(s.ExternalID), boolInt(s.TitleDerived)},
				args...)...)
		if err != nil || n == 1 {
			break
		}
		if try == 3 { // a taken key four times in a row: not chance
			return carryon.Errorf(carryon.EINTERNAL, "insert session: no free session key")
		}
	}
	if err == nil && s.ParentID != "" {
		return t.storeChain(ctx, s) // a fork: the segments it reads through (forks.go)
	}
	if s.ExternalID != "" {
		return t.Conflict(err, "insert session", "a session with external id %q exists", s.ExternalID)
	}
	return t.Conflict(err, "insert session", "session %s exists", s.ID)
}

// serialSessionKey is a new session's key where writers are serialised: one more than the
// largest (read through the unique index on session_key). The key of the newest session may be
// given again after it is deleted; every row stored under it went with it, and the fork chains
// that named it were rebuilt (DeleteSession).
const serialSessionKey = `(SELECT coalesce(max(session_key), 0) + 1 FROM sessions)`

// GetSession returns the owner's session. ENOTFOUND when missing or owned by someone else. Inside
// Write it locks the row until the transaction ends (Dialect.LockForUpdate), so a
// read-check-write of the session is safe: a concurrent writer of the same session waits here and
// then reads the committed row.
func (t *Tx) GetSession(ctx context.Context, owner, id string) (*carryon.Session, error) {
	var key int64
	if t.ReadOnly {
		// A read goes on to the session's messages, which a fork reads through its chain.
		var segs *string
		s, err := scanSessionAnd(t.Conn.QueryRow(ctx, `SELECT `+sessionCols+`, session_key, c.segments FROM sessions
			LEFT JOIN fork_chains c ON c.session_id = sessions.id WHERE sessions.id = ? AND sessions.owner_id = ?`, id, owner), &key, &segs)
		if errors.Is(err, ErrNoRows) {
			return nil, NotFound("session", id)
		} else if err != nil {
			return nil, t.Wrap(err, "get session")
		}
		ms := memoSession{key: key}
		if s.ParentID != "" && segs != nil {
			if ms.inherited, ms.tail, err = decodeSegments(*segs); err != nil {
				return nil, t.Wrap(err, "read fork chain of "+id)
			}
			ms.chained = true
		}
		t.remember(owner, id, ms)
		return s, nil
	}
	s, err := scanSessionAnd(t.Conn.QueryRow(ctx, `SELECT `+sessionCols+`, session_key FROM sessions WHERE id = ? AND owner_id = ?`+
		t.d.LockForUpdate, id, owner), &key)
	if errors.Is(err, ErrNoRows) {
		return nil, NotFound("session", id)
	} else if err != nil {
		return nil, t.Wrap(err, "get session")
	}
	t.rememberKey(owner, id, key)
	return s, nil
}

// LockSession reads the session with Dialect.LockForUpdate, in a write transaction of a database
// that locks rows; otherwise it reads nothing.
func (t *Tx) LockSession(ctx context.Context, owner, id string) error {
	if t.ReadOnly || t.d.LockForUpdate == "" {
		return nil
	}
	if _, err := t.GetSession(ctx, owner, id); err != nil && carryon.ErrorCode(err) != carryon.ENOTFOUND {
		return err
	}
	return nil
}

// ListSessions returns a page of the owner's sessions by (created_at, id) descending, filtered
// by the status a client sees at q.Now and by q's search conditions (search.go). A Limit of zero
// or less means no limit. A search with terms runs by the plan searchPlan chooses.
func (t *Tx) ListSessions(ctx context.Context, owner string, q store.SessionQuery) ([]*carryon.Session, error) {
	if len(q.Terms) > 0 {
		if err := t.FlushSearch(ctx); err != nil {
			return nil, err
		}
	}
	where, args := t.sessionFilters(owner, q)
	if len(q.Terms) > 0 && (q.Plan == store.SearchPlanProbe || q.Plan == store.SearchPlanAuto && q.Limit > 0) {
		page, ok, err := t.probeSessions(ctx, where, args, q)
		if err != nil || ok {
			return page, err
		}
	}
	if len(q.Terms) > 0 {
		where, args = t.collectMatches(where, args, q.Terms)
	}
	query := `SELECT ` + sessionCols + ` FROM sessions` + where + ` ORDER BY created_at DESC, id DESC` + limitArg
	return scanAll(t, ctx, "list sessions", scanSession, query, append(args, Limit(q.Limit))...)
}

// sessionFilters is the WHERE clause, and its arguments, of the owner's sessions that q selects
// but for its text: the external id, the status at q.Now, the other search conditions and the
// place after the previous page.
func (t *Tx) sessionFilters(owner string, q store.SessionQuery) (string, []any) {
	query := ` WHERE owner_id = ?`
	args := []any{owner}
	if q.ExternalID != "" {
		query += ` AND external_id = ?`
		args = append(args, q.ExternalID)
	}
	switch q.Status {
	case "":
	case carryon.SessionActive:
		query += ` AND status = 'active' AND expires_at > ?`
		args = append(args, Micros(q.Now))
	case carryon.SessionExpired:
		query += ` AND (status = 'expired' OR (status = 'active' AND expires_at <= ?))`
		args = append(args, Micros(q.Now))
	default:
		query += ` AND status = ?`
		args = append(args, string(q.Status))
	}
	query, args = t.searchConditions(query, args, q)
	if q.AfterID != "" {
		query += ` AND (created_at < ? OR (created_at = ? AND id < ?))`
		args = append(args, Micros(q.AfterCreated), Micros(q.AfterCreated), q.AfterID)
	}
	return query, args
}

// UpdateSession stores every mutable field of s if the row is s.OwnerID's and at version prev.
// ENOTFOUND when missing or foreign; EVERSION with CurrentVersion when the version moved. Where
// writers are not serialised, the UPDATE waits for a concurrent writer of the row and then
// re-checks the version against the committed row, so exactly one of two writers that read
// version N stores N+1.
func (t *Tx) UpdateSession(ctx context.Context, s *carryon.Session, prev int64) error {
	if err := t.Writable(); err != nil {
		return err
	}
	n, err := t.Conn.Exec(ctx, `UPDATE sessions SET title = ?, status = ?, version = ?, updated_at = ?,
		last_active_at = ?, expires_at = ?, idle_ttl_seconds = ?, message_count = ?, last_seq = ?,
		memory_version = ?, metadata = ?, title_derived = ?
		WHERE id = ? AND owner_id = ? AND version = ?`,
		s.Title, string(s.Status), s.Version, Micros(s.UpdatedAt), Micros(s.LastActiveAt), Micros(s.ExpiresAt),
		s.IdleTTLSeconds, s.MessageCount, s.LastSeq, s.WorkingMemoryVersion, NullText(s.Metadata), boolInt(s.TitleDerived),
		s.ID, s.OwnerID, prev)
	if err != nil {
		return t.Wrap(err, "update session")
	}
	if n == 1 {
		return nil
	}
	var current int64
	err = t.Conn.QueryRow(ctx, `SELECT version FROM sessions WHERE id = ? AND owner_id = ?`, s.ID, s.OwnerID).Scan(&current)
	if errors.Is(err, ErrNoRows) {
		return NotFound("session", s.ID)
	} else if err != nil {
		return t.Wrap(err, "update session")
	}
	return carryon.VersionConflict(prev, current)
}

// DeleteSession removes the owner's session, every row in it and the request ids recorded with
// its id (the rows that reference it go with it by ON DELETE CASCADE). Each direct fork first gets a
// copy of the history it shares (everything visible up to its ForkSeq) and loses its ParentID, so
// it keeps its whole history; deeper forks read through it unchanged. The session row is read
// with Dialect.LockForDelete first: a fork being made concurrently either commits before (and is
// materialised here) or fails its foreign key check after. ENOTFOUND.
func (t *Tx) DeleteSession(ctx context.Context, owner, id string) error {
	if err := t.Writable(); err != nil {
		return err
	}
	head, err := t.ownLink(ctx, owner, id, t.d.LockForDelete)
	if err != nil {
		return err
	}
	forks, err := scanAll(t, ctx, "delete session", func(r Row) (store.ForkLink, error) {
		f := store.ForkLink{ParentID: id}
		err := r.Scan(&f.ID, &f.Key, &f.ForkSeq)
		return f, err
	}, `SELECT id, session_key, fork_seq FROM sessions WHERE parent_id = ?`, id)
	if err != nil {
		return err
	}
	if len(forks) > 0 {
		segs, err := store.ForkSegments(head, -1, t.parentOf(ctx))
		if err != nil {
			return err
		}
		for _, f := range forks {
			if err := t.materialise(ctx, f, segs); err != nil {
				return err
			}
		}
		if err := t.rechain(ctx, id, head.Key); err != nil { // the deeper forks' chains that named id
			return err
		}
	}
	t.Forget() // the session's key and memory, and its forks' parents
	if err := t.unindexSession(ctx, head.Key); err != nil {
		return err
	}
	if _, err := t.Conn.Exec(ctx, `DELETE FROM sessions WHERE id = ?`, id); err != nil {
		return t.Wrap(err, "delete session")
	}
	if err := t.eraseInherited(ctx, head); err != nil {
		return err
	}
	_, err = t.Conn.Exec(ctx, `DELETE FROM idempotency WHERE session_id = ? AND owner_id = ?`, id, owner)
	return t.Wrap(err, "delete session's request ids")
}

// eraseInherited erases, once the fork head is deleted, the rows of its ancestors that it was
// the last to see: those their own sessions deleted (redact.go).
func (t *Tx) eraseInherited(ctx context.Context, head store.ForkLink) error {
	if head.ParentID == "" {
		return nil
	}
	parent, err := t.parentOf(ctx)(head)
	if err != nil {
		return err
	}
	segs, err := store.ForkSegments(parent, -1, t.parentOf(ctx))
	if err != nil {
		return err
	}
	for _, sg := range segs {
		hi := min(sg.Hi, head.ForkSeq)
		seqs, err := scanAll(t, ctx, "erase inherited messages", func(r Row) (int64, error) {
			var seq int64
			err := r.Scan(&seq)
			return seq, err
		}, `SELECT d.seq FROM message_deletions d JOIN sessions o ON o.id = d.session_id
			WHERE o.session_key = ? AND d.seq > ? AND d.seq <= ?`, sg.Key, sg.Lo, hi)
		if err != nil {
			return err
		}
		for _, seq := range seqs {
			if err := t.eraseUnseen(ctx, sg.Key, seq); err != nil {
				return err
			}
		}
	}
	return nil
}

// materialise copies the part of segs a fork shares (seq <= its fork seq) into the fork and
// detaches it from its parent. A row the fork deleted is copied erased (see redact.go): the
// session that still saw it is going, and the fork had deleted it.
func (t *Tx) materialise(ctx context.Context, f store.ForkLink, segs []store.ForkSegment) error {
	for _, sg := range segs {
		hi := min(sg.Hi, f.ForkSeq)
		if sg.Lo >= hi {
			continue
		}
		_, err := t.Conn.Exec(ctx, `INSERT INTO messages (`+messageCols+`)
			SELECT ?, seq, role, kind, CASE WHEN `+forkDeleted+` THEN '' ELSE content END, name,
			CASE WHEN `+forkDeleted+` THEN NULL ELSE tool_calls END, tool_call_id, covers_from, covers_to,
			tokens, CASE WHEN `+forkDeleted+` THEN NULL ELSE metadata END, version, created_at
			FROM messages WHERE session_key = ? AND seq > ? AND seq <= ?`, f.Key, f.ID, f.ID, f.ID, sg.Key, sg.Lo, hi)
		if err != nil {
			return t.Wrap(err, "materialise fork")
		}
		// The writes of those rows, clamped to the copied range: the fork's own writes start
		// after its fork seq, so these never meet them (see writesJoin).
		_, err = t.Conn.Exec(ctx, `INSERT INTO message_writes (session_key, version, lo, hi, request_id, run_id)
			SELECT ?, version, CASE WHEN lo > ? THEN lo ELSE ? END, CASE WHEN hi < ? THEN hi ELSE ? END, request_id, run_id
			FROM message_writes WHERE session_key = ? AND hi > ? AND lo <= ?`,
			f.Key, sg.Lo, sg.Lo+1, hi, hi, sg.Key, sg.Lo, hi)
		if err != nil {
			return t.Wrap(err, "materialise fork")
		}
	}
	if _, err := t.Conn.Exec(ctx, `UPDATE sessions SET parent_id = NULL WHERE id = ?`, f.ID); err != nil {
		return t.Wrap(err, "materialise fork")
	}
	_, err := t.Conn.Exec(ctx, `DELETE FROM fork_chains WHERE session_id = ?`, f.ID)
	return t.Wrap(err, "materialise fork")
}

// forkDeleted is the condition, in materialise, that the fork (the argument) deleted the row.
const forkDeleted = `EXISTS (SELECT 1 FROM message_deletions d WHERE d.session_id = ? AND d.seq = messages.seq)`

// PurgeableSessions returns up to q.Limit sessions of any owner that expired before
// q.ExpiredBefore and, when q.ClosedBefore is set, that were closed before it, the oldest first.
// A closed session is never selected by its ExpiresAt (closing a session keeps its history).
func (t *Tx) PurgeableSessions(ctx context.Context, q store.PurgeQuery) ([]store.SessionRef, error) {
	query := `SELECT owner_id, id, expires_at AS t FROM sessions
		WHERE status IN ('active', 'expired') AND expires_at < ?`
	args := []any{Micros(q.ExpiredBefore)}
	if !q.ClosedBefore.IsZero() {
		query += ` UNION ALL SELECT owner_id, id, updated_at AS t FROM sessions
			WHERE status = 'closed' AND updated_at < ?`
		args = append(args, Micros(q.ClosedBefore))
	}
	return scanAll(t, ctx, "purgeable sessions", func(r Row) (store.SessionRef, error) {
		var ref store.SessionRef
		err := r.Scan(&ref.OwnerID, &ref.ID)
		return ref, err
	}, `SELECT owner_id, id FROM (`+query+`) AS p ORDER BY t, id`+limitArg, append(args, Limit(q.Limit))...)
}

// boolInt is a flag as stored: 1 or 0 (an INTEGER column on both drivers).
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
