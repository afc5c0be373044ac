package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/store"
)

// link and segment are the fork chain's pieces; the walks over them are in package store.
type (
	link    = store.ForkLink
	segment = store.ForkSegment
)

// ownLink returns the chain link of the owner's session. ENOTFOUND when missing or foreign.
func (t *tx) ownLink(ctx context.Context, owner, id string) (link, error) {
	l := link{ID: id}
	var parent sql.NullString
	err := t.tx.QueryRowContext(ctx, `SELECT parent_id, fork_seq FROM sessions WHERE id = ? AND owner_id = ?`,
		id, owner).Scan(&parent, &l.ForkSeq)
	if errors.Is(err, sql.ErrNoRows) {
		return l, notFound("session", id)
	} else if err != nil {
		return l, wrap(err, "get session")
	}
	l.ParentID = parent.String
	return l, nil
}

// parentLink returns the link of l's parent, which must exist.
func (t *tx) parentLink(ctx context.Context, l link) (link, error) {
	p := link{ID: l.ParentID}
	var parent sql.NullString
	err := t.tx.QueryRowContext(ctx, `SELECT parent_id, fork_seq FROM sessions WHERE id = ?`, l.ParentID).Scan(&parent, &p.ForkSeq)
	if err != nil {
		return p, wrap(err, "read fork parent of "+l.ID)
	}
	p.ParentID = parent.String
	return p, nil
}

// parentOf returns the chain walks' way to read a parent's link in this transaction.
func (t *tx) parentOf(ctx context.Context) store.ParentFunc {
	return func(l link) (link, error) { return t.parentLink(ctx, l) }
}

// InsertMessages stores messages as given. ENOTFOUND when a session is not the owner's;
// ECONFLICT on a seq that exists.
func (t *tx) InsertMessages(ctx context.Context, owner string, msgs []*carryon.Message) error {
	if err := t.Writable(); err != nil {
		return err
	}
	checked := map[string]bool{}
	for _, m := range msgs {
		if checked[m.SessionID] {
			continue
		}
		if _, err := t.ownLink(ctx, owner, m.SessionID); err != nil {
			return err
		}
		checked[m.SessionID] = true
	}
	stmt, err := t.tx.PrepareContext(ctx, `INSERT INTO messages (session_id, seq, role, kind, content, name,
		tool_calls, tool_call_id, covers_from, covers_to, run_id, request_id, tokens, metadata, version, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return wrap(err, "insert messages")
	}
	defer stmt.Close()
	for _, m := range msgs {
		kind := m.Kind
		if kind == "" {
			kind = carryon.KindMessage
		}
		_, err := stmt.ExecContext(ctx, m.SessionID, m.Seq, string(m.Role), kind, m.Content, m.Name,
			nullText(m.ToolCalls), m.ToolCallID, m.CoversFrom, m.CoversTo, m.RunID, m.RequestID, m.Tokens,
			nullText(m.Metadata), m.Version, micros(m.CreatedAt))
		if err != nil {
			return conflict(err, "message %d of session %s exists", m.Seq, m.SessionID)
		}
	}
	return nil
}

const messageCols = `session_id, seq, role, kind, content, name, tool_calls, tool_call_id, covers_from,
	covers_to, run_id, request_id, tokens, metadata, version, created_at`

// queryMessages reads rows of one segment and labels them with as, the session being read.
func (t *tx) queryMessages(ctx context.Context, as, query string, args ...any) ([]*carryon.Message, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT `+messageCols+` FROM messages `+query, args...)
	if err != nil {
		return nil, wrap(err, "read messages")
	}
	defer rows.Close()
	var out []*carryon.Message
	for rows.Next() {
		var m carryon.Message
		var role string
		var calls, meta sql.NullString
		var created int64
		if err := rows.Scan(&m.SessionID, &m.Seq, &role, &m.Kind, &m.Content, &m.Name, &calls, &m.ToolCallID,
			&m.CoversFrom, &m.CoversTo, &m.RunID, &m.RequestID, &m.Tokens, &meta, &m.Version, &created); err != nil {
			return nil, wrap(err, "read messages")
		}
		m.Role, m.ToolCalls, m.Metadata, m.CreatedAt = carryon.Role(role), rawText(calls), rawText(meta), fromMicros(created)
		m.SessionID = as
		out = append(out, &m)
	}
	return out, wrap(rows.Err(), "read messages")
}

// LastMessages returns the last limit visible messages of s, oldest first. It reads at most limit
// rows (newest first by the primary key) and climbs to a parent only while it still needs rows.
// Every returned message carries s.ID as its SessionID, inherited ones included, so a fork reads
// the same before and after its parent is deleted.
func (t *tx) LastMessages(ctx context.Context, owner string, s *carryon.Session, limit int) ([]*carryon.Message, error) {
	cur, err := t.ownLink(ctx, owner, s.ID)
	if err != nil {
		return nil, err
	}
	return store.LastInChain(cur, limit, t.parentOf(ctx), func(sg segment, n int) ([]*carryon.Message, error) {
		return t.queryMessages(ctx, s.ID, `WHERE session_id = ? AND seq > ? AND seq <= ? ORDER BY seq DESC LIMIT ?`,
			sg.ID, sg.Lo, sg.Hi, n)
	})
}

// MessagesAfter returns up to limit visible messages of s with seq > after, oldest first (a limit
// of zero or less means no limit), labelled with s.ID like LastMessages. Ancestors are read only
// when after lies in their part.
func (t *tx) MessagesAfter(ctx context.Context, owner string, s *carryon.Session, after int64, limit int) ([]*carryon.Message, error) {
	head, err := t.ownLink(ctx, owner, s.ID)
	if err != nil {
		return nil, err
	}
	return store.AfterInChain(head, after, limit, t.parentOf(ctx), func(sg segment, n int) ([]*carryon.Message, error) {
		return t.queryMessages(ctx, s.ID, `WHERE session_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?`,
			sg.ID, sg.Lo, sg.Hi, limitArg(n))
	})
}

// SeqAtVersion returns the highest visible seq of s stored at a session version <= v, or 0. A
// fork's versions are its own (the hub creates a fork at version 1), and everything it inherits
// existed before its first version: so only its own messages (seq > ForkSeq) are compared with v,
// and when none qualifies the answer is ForkSeq. This holds after the parent is deleted too, since
// materialising keeps ForkSeq. It reads one row.
func (t *tx) SeqAtVersion(ctx context.Context, owner string, s *carryon.Session, v int64) (int64, error) {
	head, err := t.ownLink(ctx, owner, s.ID)
	if err != nil {
		return 0, err
	}
	var seq int64
	err = t.tx.QueryRowContext(ctx, `SELECT seq FROM messages WHERE session_id = ? AND seq > ? AND version <= ?
		ORDER BY seq DESC LIMIT 1`, head.ID, head.ForkSeq, v).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return head.ForkSeq, nil
	} else if err != nil {
		return 0, wrap(err, "seq at version")
	}
	return seq, nil
}
