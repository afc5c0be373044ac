package sqlq

import (
	"context"
	"errors"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// messageCols are the columns of a messages row. A row names its session by the session's key
// (sessions.session_key, an integer), not by its id: the id's 31 bytes in every row were a
// fifth of it. A message's run and request ids are not among them: they are stored once per
// write in message_writes (see InsertMessages).
const messageCols = `session_key, seq, role, kind, content, name, tool_calls, tool_call_id, covers_from,
	covers_to, tokens, metadata, version, created_at`

// messageRead is what scanMessage reads, from a messages row m joined with writesJoin.
const messageRead = `m.seq, m.role, m.kind, m.content, m.name, m.tool_calls, m.tool_call_id,
	m.covers_from, m.covers_to, coalesce(w.run_id, ''), coalesce(w.request_id, ''), m.tokens, m.metadata,
	m.version, m.created_at`

// writesJoin joins the messages row m with the write that stored it, if that write had a run or
// request id: the row of its session and version whose seq range holds m.seq (a session's
// version names one write, whose messages have consecutive seqs; the range tells apart the rows
// a fork copied from several ancestors when its parent was deleted, whose versions are theirs).
const writesJoin = ` LEFT JOIN message_writes w ON w.session_key = m.session_key AND w.version = m.version
	AND w.lo <= m.seq AND w.hi >= m.seq`

// InsertMessages stores messages as given (in one round trip where the database can: see
// Conn.ExecEach). ENOTFOUND when a session is not the owner's; ECONFLICT on a seq that exists.
func (t *Tx) InsertMessages(ctx context.Context, owner string, msgs []*carryon.Message) error {
	if err := t.Writable(); err != nil {
		return err
	}
	keys := map[string]int64{}
	for _, m := range msgs {
		if _, ok := keys[m.SessionID]; ok {
			continue
		}
		k, err := t.ownKey(ctx, owner, m.SessionID)
		if err != nil {
			return err
		}
		keys[m.SessionID] = k
	}
	rows := make([][]any, len(msgs))
	for i, m := range msgs {
		kind := m.Kind
		if kind == carryon.KindMessage {
			kind = "" // the default kind is stored as '' (migration compact_storage)
		}
		rows[i] = []any{keys[m.SessionID], m.Seq, string(m.Role), string(kind), m.Content, m.Name, NullText(m.ToolCalls), m.ToolCallID,
			m.CoversFrom, m.CoversTo, m.Tokens, NullText(m.Metadata), m.Version, Micros(m.CreatedAt)}
	}
	i, err := t.Conn.ExecEach(ctx, `INSERT INTO messages (`+messageCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, rows)
	if err != nil && i < len(msgs) {
		return t.Conflict(err, "insert messages", "message %d of session %s exists", msgs[i].Seq, msgs[i].SessionID)
	} else if err != nil {
		return t.Wrap(err, "insert messages")
	}
	if err := t.indexMessages(ctx, msgs, keys); err != nil {
		return err
	}
	return t.insertWrites(ctx, msgs, keys)
}

// insertWrites stores the run and request ids of msgs once per write rather than once per
// message: one message_writes row for each run of consecutive messages (seq one after the other)
// of one session and version with the same ids, when either id is set. A turn of the hub is one
// row however many messages it appends.
func (t *Tx) insertWrites(ctx context.Context, msgs []*carryon.Message, keys map[string]int64) error {
	for i := 0; i < len(msgs); {
		m, j := msgs[i], i+1
		for j < len(msgs) && sameWrite(msgs[j-1], msgs[j]) {
			j++
		}
		if m.RunID != "" || m.RequestID != "" {
			_, err := t.Conn.Exec(ctx, `INSERT INTO message_writes (session_key, version, lo, hi, request_id, run_id)
				VALUES (?, ?, ?, ?, ?, ?)`, keys[m.SessionID], m.Version, m.Seq, msgs[j-1].Seq, m.RequestID, m.RunID)
			if err != nil {
				return t.Wrap(err, "insert messages' request id")
			}
		}
		i = j
	}
	return nil
}

// sameWrite reports whether b follows a in one write with the same ids.
func sameWrite(a, b *carryon.Message) bool {
	return a.SessionID == b.SessionID && a.Version == b.Version && a.Seq+1 == b.Seq &&
		a.RequestID == b.RequestID && a.RunID == b.RunID
}

// scanMessage reads a row of messageRead and labels it with as, the session being read.
func scanMessage(r Row, as string) (*carryon.Message, error) {
	var m carryon.Message
	var role, kind string
	var calls, meta *string
	var created int64
	if err := r.Scan(&m.Seq, &role, &kind, &m.Content, &m.Name, &calls, &m.ToolCallID,
		&m.CoversFrom, &m.CoversTo, &m.RunID, &m.RequestID, &m.Tokens, &meta, &m.Version, &created); err != nil {
		return nil, err
	}
	if kind == "" {
		kind = string(carryon.KindMessage)
	}
	m.Role, m.Kind, m.ToolCalls, m.Metadata = carryon.Role(role), carryon.MessageKind(kind), RawText(calls), RawText(meta)
	m.CreatedAt, m.SessionID = FromMicros(created), as
	return &m, nil
}

// messageSize is what a message read counts against a read budget: its text and JSON, and a
// little for the fields around them.
func messageSize(m *carryon.Message) int64 {
	return int64(len(m.Content)+len(m.ToolCalls)+len(m.Metadata)+len(m.Name)+len(m.ToolCallID)+len(m.RequestID)) + 256
}

// LastMessages returns the last limit visible messages of s, oldest first (a message s deleted is
// not visible). It reads the chain of s (one row) and then at most limit rows, in one query
// whatever the depth of the fork chain when the rows are where the segments' sizes say (see
// store.LastBeforeInChain). Every returned message carries s.ID as its SessionID, inherited ones
// included, so a fork reads the same before and after its parent is deleted.
func (t *Tx) LastMessages(ctx context.Context, owner string, s *carryon.Session, limit int) ([]*carryon.Message, error) {
	return t.lastBefore(ctx, owner, s, 0, limit)
}

// MessagesBefore returns the last limit visible messages of s with seq < before (before <= 0: no
// bound), oldest first, labelled with s.ID like LastMessages; it reads at most limit rows.
func (t *Tx) MessagesBefore(ctx context.Context, owner string, s *carryon.Session, before int64, limit int) ([]*carryon.Message, error) {
	return t.lastBefore(ctx, owner, s, max(before, 1), limit) // nothing is before the first seq
}

func (t *Tx) lastBefore(ctx context.Context, owner string, s *carryon.Session, before int64, limit int) ([]*carryon.Message, error) {
	segs, tail, last, err := t.chainOf(ctx, owner, s)
	var out []*carryon.Message
	for depth := 0; err == nil; depth++ {
		var older []*carryon.Message
		if older, err = store.LastBeforeInChain(segs, before, limit-len(out), last, t.readRanges(ctx, s.ID)); err != nil {
			break
		}
		out = append(older, out...)
		if len(out) >= limit || tail == nil {
			return out, nil
		}
		if depth > 100000 {
			return nil, carryon.Errorf(carryon.EINTERNAL, "fork chain of %s is too deep", s.ID)
		}
		segs, tail, err = t.expand(ctx, tail) // the rows still missing are further up the chain
	}
	return nil, err
}

// MessagesAfter returns up to limit visible messages of s with seq > after, oldest first (a limit
// of zero or less means no limit), labelled with s.ID like LastMessages. Ancestors are read only
// when after lies in their part.
func (t *Tx) MessagesAfter(ctx context.Context, owner string, s *carryon.Session, after int64, limit int) ([]*carryon.Message, error) {
	segs, tail, last, err := t.chainOf(ctx, owner, s)
	if err == nil {
		segs, err = t.expandAll(ctx, s.ID, segs, tail)
	}
	if err != nil {
		return nil, err
	}
	return store.AfterInChain(segs, after, limit, last, t.readRanges(ctx, s.ID))
}

// SeqAtVersion returns the highest visible seq of s stored at a session version <= v, or 0. A
// fork's versions are its own (the hub creates a fork at version 1), and everything it inherits
// existed before its first version: so only its own messages (seq > ForkSeq) are compared with v,
// and when none qualifies the answer is ForkSeq. This holds after the parent is deleted too, since
// materialising keeps ForkSeq. It reads the session's link and at most one message.
func (t *Tx) SeqAtVersion(ctx context.Context, owner string, s *carryon.Session, v int64) (int64, error) {
	head, err := t.ownLink(ctx, owner, s.ID, "")
	if err != nil {
		return 0, err
	}
	var seq int64
	err = t.Conn.QueryRow(ctx, `SELECT seq FROM messages WHERE session_key = ? AND seq > ? AND version <= ?
		ORDER BY seq DESC LIMIT 1`, head.Key, head.ForkSeq, v).Scan(&seq)
	if errors.Is(err, ErrNoRows) {
		return head.ForkSeq, nil
	} else if err != nil {
		return 0, t.Wrap(err, "seq at version")
	}
	return seq, nil
}
