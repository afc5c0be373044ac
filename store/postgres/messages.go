package postgres

import (
	"context"
	"errors"
	"math"
	"slices"

	"github.com/carryon-hub/carryon"
	"github.com/jackc/pgx/v5"
)

// A session's visible history is a chain of segments: its own rows, then (for a fork) its parent's
// rows up to ForkSeq, and so on up to the root. Readers walk the chain only as far as they need.

// maxForkDepth bounds a chain walk, so that corrupt parent links cannot loop forever.
const maxForkDepth = 100000

// link is one session of a fork chain.
type link struct {
	id       string
	parentID string
	forkSeq  int64
}

// lo is the seq below which the session's history is its parent's.
func (l link) lo() int64 {
	if l.parentID == "" {
		return 0
	}
	return l.forkSeq
}

// segment is the rows (lo, hi] of one session that a descendant sees.
type segment struct {
	id     string
	lo, hi int64
}

// ownLink returns the chain link of the owner's session, with lock appended to the query (a
// row-locking clause or ""). ENOTFOUND when missing or foreign.
func (t *tx) ownLink(ctx context.Context, owner, id, lock string) (link, error) {
	l := link{id: id}
	var parent *string
	err := t.tx.QueryRow(ctx, `SELECT parent_id, fork_seq FROM sessions WHERE id = $1 AND owner_id = $2`+lock,
		id, owner).Scan(&parent, &l.forkSeq)
	if errors.Is(err, pgx.ErrNoRows) {
		return l, notFound("session", id)
	} else if err != nil {
		return l, wrap(err, "get session")
	}
	if parent != nil {
		l.parentID = *parent
	}
	return l, nil
}

// ownSession checks that the session exists and is the owner's. ENOTFOUND.
func (t *tx) ownSession(ctx context.Context, owner, id string) error {
	_, err := t.ownLink(ctx, owner, id, "")
	return err
}

// parentLink returns the link of l's parent, which must exist.
func (t *tx) parentLink(ctx context.Context, l link) (link, error) {
	p := link{id: l.parentID}
	var parent *string
	err := t.tx.QueryRow(ctx, `SELECT parent_id, fork_seq FROM sessions WHERE id = $1`, l.parentID).Scan(&parent, &p.forkSeq)
	if err != nil {
		return p, wrap(err, "read fork parent of "+l.id)
	}
	if parent != nil {
		p.parentID = *parent
	}
	return p, nil
}

// segments returns the whole chain of head, head first.
func (t *tx) segments(ctx context.Context, head link) ([]segment, error) {
	return t.segmentsAbove(ctx, head, -1)
}

// segmentsAbove returns the chain of head, head first, stopping at the first session whose
// segment lies entirely at or below seq floor.
func (t *tx) segmentsAbove(ctx context.Context, head link, floor int64) ([]segment, error) {
	var segs []segment
	cur, hi := head, int64(math.MaxInt64)
	for depth := 0; ; depth++ {
		if depth > maxForkDepth {
			return nil, carryon.Errorf(carryon.EINTERNAL, "fork chain of %s is too deep", head.id)
		}
		lo := cur.lo()
		if lo < hi {
			segs = append(segs, segment{id: cur.id, lo: lo, hi: hi})
		}
		if cur.parentID == "" || lo <= floor {
			return segs, nil
		}
		hi = min(hi, lo)
		var err error
		if cur, err = t.parentLink(ctx, cur); err != nil {
			return nil, err
		}
	}
}

// InsertMessages stores messages as given, in one round trip. ENOTFOUND when a session is not the
// owner's; ECONFLICT on a seq that exists.
func (t *tx) InsertMessages(ctx context.Context, owner string, msgs []*carryon.Message) error {
	if err := t.writable(); err != nil {
		return err
	}
	checked := map[string]bool{}
	for _, m := range msgs {
		if checked[m.SessionID] {
			continue
		}
		if err := t.ownSession(ctx, owner, m.SessionID); err != nil {
			return err
		}
		checked[m.SessionID] = true
	}
	b := &pgx.Batch{}
	for _, m := range msgs {
		kind := m.Kind
		if kind == "" {
			kind = carryon.KindMessage
		}
		b.Queue(`INSERT INTO messages (session_id, seq, role, kind, content, name, tool_calls, tool_call_id,
			covers_from, covers_to, run_id, request_id, tokens, metadata, version, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
			m.SessionID, m.Seq, string(m.Role), kind, m.Content, m.Name, nullText(m.ToolCalls), m.ToolCallID,
			m.CoversFrom, m.CoversTo, m.RunID, m.RequestID, m.Tokens, nullText(m.Metadata), m.Version,
			micros(m.CreatedAt))
	}
	br := t.tx.SendBatch(ctx, b)
	for _, m := range msgs {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return conflict(err, "message %d of session %s exists", m.Seq, m.SessionID)
		}
	}
	return wrap(br.Close(), "insert messages")
}

const messageCols = `session_id, seq, role, kind, content, name, tool_calls, tool_call_id, covers_from,
	covers_to, run_id, request_id, tokens, metadata, version, created_at`

// queryMessages reads rows of one segment and labels them with as, the session being read.
func (t *tx) queryMessages(ctx context.Context, as, query string, args ...any) ([]*carryon.Message, error) {
	rows, err := t.tx.Query(ctx, `SELECT `+messageCols+` FROM messages `+query, args...)
	if err != nil {
		return nil, wrap(err, "read messages")
	}
	defer rows.Close()
	var out []*carryon.Message
	for rows.Next() {
		var m carryon.Message
		var role, kind string
		var calls, meta *string
		var created int64
		if err := rows.Scan(&m.SessionID, &m.Seq, &role, &kind, &m.Content, &m.Name, &calls, &m.ToolCallID,
			&m.CoversFrom, &m.CoversTo, &m.RunID, &m.RequestID, &m.Tokens, &meta, &m.Version, &created); err != nil {
			return nil, wrap(err, "read messages")
		}
		m.Role, m.Kind, m.ToolCalls, m.Metadata = carryon.Role(role), kind, rawText(calls), rawText(meta)
		m.CreatedAt, m.SessionID = fromMicros(created), as
		out = append(out, &m)
	}
	return out, wrap(rows.Err(), "read messages")
}

// LastMessages returns the last limit visible messages of s, oldest first. It reads at most limit
// rows (newest first by the (session_id, seq) primary key) and climbs to a parent only while it
// still needs rows. Every returned message carries s.ID as its SessionID, inherited ones included,
// so a fork reads the same before and after its parent is deleted.
func (t *tx) LastMessages(ctx context.Context, owner string, s *carryon.Session, limit int) ([]*carryon.Message, error) {
	cur, err := t.ownLink(ctx, owner, s.ID, "")
	if err != nil || limit <= 0 {
		return nil, err
	}
	var out []*carryon.Message
	hi := int64(math.MaxInt64)
	for depth := 0; len(out) < limit; depth++ {
		if depth > maxForkDepth {
			return nil, carryon.Errorf(carryon.EINTERNAL, "fork chain of %s is too deep", s.ID)
		}
		lo := cur.lo()
		if lo < hi {
			ms, err := t.queryMessages(ctx, s.ID, `WHERE session_id = $1 AND seq > $2 AND seq <= $3
				ORDER BY seq DESC LIMIT $4`, cur.id, lo, hi, limit-len(out))
			if err != nil {
				return nil, err
			}
			out = append(out, ms...)
		}
		if cur.parentID == "" || len(out) >= limit {
			break
		}
		hi = min(hi, lo)
		if cur, err = t.parentLink(ctx, cur); err != nil {
			return nil, err
		}
	}
	slices.Reverse(out)
	return out, nil
}

// MessagesAfter returns up to limit visible messages of s with seq > after, oldest first (a limit
// of zero or less means no limit), labelled with s.ID like LastMessages. Ancestors are read only
// when after lies in their part.
func (t *tx) MessagesAfter(ctx context.Context, owner string, s *carryon.Session, after int64, limit int) ([]*carryon.Message, error) {
	head, err := t.ownLink(ctx, owner, s.ID, "")
	if err != nil {
		return nil, err
	}
	segs, err := t.segmentsAbove(ctx, head, after)
	if err != nil {
		return nil, err
	}
	var out []*carryon.Message
	for _, sg := range slices.Backward(segs) {
		lo := max(sg.lo, after)
		if lo >= sg.hi {
			continue
		}
		n := limitArg(limit)
		if limit > 0 {
			n = limitArg(limit - len(out))
		}
		ms, err := t.queryMessages(ctx, s.ID, `WHERE session_id = $1 AND seq > $2 AND seq <= $3
			ORDER BY seq LIMIT $4`, sg.id, lo, sg.hi, n)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
		if limit > 0 && len(out) >= limit {
			break
		}
	}
	return out, nil
}

// SeqAtVersion returns the highest visible seq of s stored at a session version <= v, or 0. A
// fork's versions are its own (the hub creates a fork at version 1), and everything it inherits
// existed before its first version: so only its own messages (seq > ForkSeq) are compared with v,
// and when none qualifies the answer is ForkSeq. This holds after the parent is deleted too, since
// materialising keeps ForkSeq. It reads one row.
func (t *tx) SeqAtVersion(ctx context.Context, owner string, s *carryon.Session, v int64) (int64, error) {
	head, err := t.ownLink(ctx, owner, s.ID, "")
	if err != nil {
		return 0, err
	}
	var seq int64
	err = t.tx.QueryRow(ctx, `SELECT seq FROM messages WHERE session_id = $1 AND seq > $2 AND version <= $3
		ORDER BY seq DESC LIMIT 1`, head.id, head.forkSeq, v).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return head.forkSeq, nil
	} else if err != nil {
		return 0, wrap(err, "seq at version")
	}
	return seq, nil
}
