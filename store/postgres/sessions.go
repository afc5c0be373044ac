package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/store"
	"github.com/jackc/pgx/v5"
)

const sessionCols = `id, owner_id, title, status, version, parent_id, fork_seq, fork_version, created_at,
	updated_at, last_active_at, expires_at, idle_ttl_seconds, message_count, last_seq, memory_version, metadata`

func scanSession(r scanner) (*carryon.Session, error) {
	var s carryon.Session
	var parent, meta *string
	var status string
	var created, updated, active, expires int64
	err := r.Scan(&s.ID, &s.OwnerID, &s.Title, &status, &s.Version, &parent, &s.ForkSeq, &s.ForkVersion,
		&created, &updated, &active, &expires, &s.IdleTTLSeconds, &s.MessageCount, &s.LastSeq,
		&s.MemoryVersion, &meta)
	if err != nil {
		return nil, err
	}
	s.Status = carryon.SessionStatus(status)
	if parent != nil {
		s.ParentID = *parent
	}
	s.CreatedAt, s.UpdatedAt = fromMicros(created), fromMicros(updated)
	s.LastActiveAt, s.ExpiresAt = fromMicros(active), fromMicros(expires)
	s.Metadata = rawText(meta)
	return &s, nil
}

// InsertSession stores a new session row. ECONFLICT when the id exists; ENOTFOUND when ParentID
// names no session.
func (t *tx) InsertSession(ctx context.Context, s *carryon.Session) error {
	if err := t.Writable(); err != nil {
		return err
	}
	var parent *string
	if s.ParentID != "" {
		parent = &s.ParentID
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO sessions (`+sessionCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
		s.ID, s.OwnerID, s.Title, string(s.Status), s.Version, parent, s.ForkSeq, s.ForkVersion,
		micros(s.CreatedAt), micros(s.UpdatedAt), micros(s.LastActiveAt), micros(s.ExpiresAt),
		s.IdleTTLSeconds, s.MessageCount, s.LastSeq, s.MemoryVersion, nullText(s.Metadata))
	if err != nil {
		return conflict(err, "session %s exists", s.ID)
	}
	return nil
}

// GetSession returns the owner's session. ENOTFOUND when missing or owned by someone else. Inside
// Write it locks the row until the transaction ends, so a read-check-write of the session is safe:
// a concurrent writer of the same session waits here and then reads the committed row.
func (t *tx) GetSession(ctx context.Context, owner, id string) (*carryon.Session, error) {
	row := t.tx.QueryRow(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = $1 AND owner_id = $2`+t.forWrite(), id, owner)
	s, err := scanSession(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("session", id)
	}
	return s, wrap(err, "get session")
}

// args collects the arguments of a query built piece by piece.
type args []any

// add appends v and returns its placeholder.
func (a *args) add(v any) string {
	*a = append(*a, v)
	return fmt.Sprintf("$%d", len(*a))
}

// ListSessions returns a page of the owner's sessions by (created_at, id) descending, filtered
// by the status a client sees at q.Now. A Limit of zero or less means no limit.
func (t *tx) ListSessions(ctx context.Context, owner string, q store.SessionQuery) ([]*carryon.Session, error) {
	var a args
	query := `SELECT ` + sessionCols + ` FROM sessions WHERE owner_id = ` + a.add(owner)
	switch q.Status {
	case "":
	case carryon.SessionActive:
		query += ` AND status = 'active' AND expires_at > ` + a.add(micros(q.Now))
	case carryon.SessionExpired:
		query += ` AND (status = 'expired' OR (status = 'active' AND expires_at <= ` + a.add(micros(q.Now)) + `))`
	default:
		query += ` AND status = ` + a.add(string(q.Status))
	}
	if q.AfterID != "" {
		p, id := a.add(micros(q.AfterCreated)), a.add(q.AfterID)
		query += ` AND (created_at < ` + p + ` OR (created_at = ` + p + ` AND id < ` + id + `))`
	}
	query += ` ORDER BY created_at DESC, id DESC LIMIT ` + a.add(limitArg(q.Limit))
	rows, err := t.tx.Query(ctx, query, a...)
	if err != nil {
		return nil, wrap(err, "list sessions")
	}
	defer rows.Close()
	var out []*carryon.Session
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, wrap(err, "list sessions")
		}
		out = append(out, s)
	}
	return out, wrap(rows.Err(), "list sessions")
}

// UpdateSession stores every mutable field of s if the row is s.OwnerID's and at version prev.
// ENOTFOUND when missing or foreign; EVERSION with CurrentVersion when the version moved. The
// UPDATE waits for a concurrent writer of the row and then re-checks the version against the
// committed row, so exactly one of two writers that read version N stores N+1.
func (t *tx) UpdateSession(ctx context.Context, s *carryon.Session, prev int64) error {
	if err := t.Writable(); err != nil {
		return err
	}
	tag, err := t.tx.Exec(ctx, `UPDATE sessions SET title = $1, status = $2, version = $3, updated_at = $4,
		last_active_at = $5, expires_at = $6, idle_ttl_seconds = $7, message_count = $8, last_seq = $9,
		memory_version = $10, metadata = $11
		WHERE id = $12 AND owner_id = $13 AND version = $14`,
		s.Title, string(s.Status), s.Version, micros(s.UpdatedAt), micros(s.LastActiveAt), micros(s.ExpiresAt),
		s.IdleTTLSeconds, s.MessageCount, s.LastSeq, s.MemoryVersion, nullText(s.Metadata),
		s.ID, s.OwnerID, prev)
	if err != nil {
		return wrap(err, "update session")
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var current int64
	err = t.tx.QueryRow(ctx, `SELECT version FROM sessions WHERE id = $1 AND owner_id = $2`, s.ID, s.OwnerID).Scan(&current)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound("session", s.ID)
	} else if err != nil {
		return wrap(err, "update session")
	}
	return carryon.VersionConflict(prev, current)
}

// DeleteSession removes the owner's session, every row in it and the request ids recorded with
// its id (the rows that reference it go with it by ON DELETE CASCADE). Each direct fork first gets a
// copy of the history it shares (everything visible up to its ForkSeq) and loses its ParentID, so
// it keeps its whole history; deeper forks read through it unchanged. The session row is locked
// FOR UPDATE first: a fork being made concurrently either commits before (and is materialised
// here) or fails its foreign key check after. ENOTFOUND.
func (t *tx) DeleteSession(ctx context.Context, owner, id string) error {
	if err := t.Writable(); err != nil {
		return err
	}
	head, err := t.ownLink(ctx, owner, id, " FOR UPDATE")
	if err != nil {
		return err
	}
	rows, err := t.tx.Query(ctx, `SELECT id, fork_seq FROM sessions WHERE parent_id = $1`, id)
	if err != nil {
		return wrap(err, "delete session")
	}
	var forks []link
	for rows.Next() {
		var f link
		if err := rows.Scan(&f.ID, &f.ForkSeq); err != nil {
			rows.Close()
			return wrap(err, "delete session")
		}
		forks = append(forks, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return wrap(err, "delete session")
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
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM sessions WHERE id = $1`, id); err != nil {
		return wrap(err, "delete session")
	}
	_, err = t.tx.Exec(ctx, `DELETE FROM idempotency WHERE session_id = $1 AND owner_id = $2`, id, owner)
	return wrap(err, "delete session's request ids")
}

// materialise copies the part of segs a fork shares (seq <= its fork seq) into the fork and
// detaches it from its parent.
func (t *tx) materialise(ctx context.Context, f link, segs []segment) error {
	for _, sg := range segs {
		hi := min(sg.Hi, f.ForkSeq)
		if sg.Lo >= hi {
			continue
		}
		_, err := t.tx.Exec(ctx, `INSERT INTO messages (session_id, seq, role, kind, content, name, tool_calls,
			tool_call_id, covers_from, covers_to, run_id, request_id, tokens, metadata, version, created_at)
			SELECT $1, seq, role, kind, content, name, tool_calls, tool_call_id, covers_from, covers_to, run_id,
			request_id, tokens, metadata, version, created_at
			FROM messages WHERE session_id = $2 AND seq > $3 AND seq <= $4`, f.ID, sg.ID, sg.Lo, hi)
		if err != nil {
			return wrap(err, "materialise fork")
		}
	}
	if _, err := t.tx.Exec(ctx, `UPDATE sessions SET parent_id = NULL WHERE id = $1`, f.ID); err != nil {
		return wrap(err, "materialise fork")
	}
	return nil
}

// PurgeableSessions returns up to q.Limit sessions of any owner that expired before
// q.ExpiredBefore and, when q.ClosedBefore is set, that were closed before it, the oldest first.
// A closed session is never selected by its ExpiresAt (closing a session keeps its history).
func (t *tx) PurgeableSessions(ctx context.Context, q store.PurgeQuery) ([]store.SessionRef, error) {
	query := `SELECT owner_id, id, expires_at AS t FROM sessions
		WHERE status IN ('active', 'expired') AND expires_at < $1`
	args := []any{micros(q.ExpiredBefore)}
	if !q.ClosedBefore.IsZero() {
		query += ` UNION ALL SELECT owner_id, id, updated_at AS t FROM sessions
			WHERE status = 'closed' AND updated_at < $2`
		args = append(args, micros(q.ClosedBefore))
	}
	args = append(args, limitArg(q.Limit))
	rows, err := t.tx.Query(ctx, `SELECT owner_id, id FROM (`+query+`) AS p ORDER BY t, id LIMIT `+fmt.Sprintf("$%d", len(args)), args...)
	if err != nil {
		return nil, wrap(err, "purgeable sessions")
	}
	defer rows.Close()
	var out []store.SessionRef
	for rows.Next() {
		var r store.SessionRef
		if err := rows.Scan(&r.OwnerID, &r.ID); err != nil {
			return nil, wrap(err, "purgeable sessions")
		}
		out = append(out, r)
	}
	return out, wrap(rows.Err(), "purgeable sessions")
}
