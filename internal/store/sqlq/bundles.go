package sqlq

import (
	"context"

	"github.com/carryon-hub/carryon"
)

// OwnMessages returns the message rows stored under s itself with seq > after, oldest first,
// those s deleted marked Deleted and emptied (a row a fork still sees keeps its text for the
// fork, which is not s's to export).
func (t *Tx) OwnMessages(ctx context.Context, owner string, s *carryon.Session, after int64, limit int) ([]*carryon.Message, error) {
	key, err := t.ownKey(ctx, owner, s.ID)
	if err != nil {
		return nil, err
	}
	msgs, err := scanAll(t, ctx, "read own messages", func(r Row) (*carryon.Message, error) { return scanMessage(r, s.ID) },
		`SELECT `+messageRead+` FROM messages m`+writesJoin+` WHERE m.session_key = ? AND m.seq > ? ORDER BY m.seq`+limitArg,
		key, after, Limit(limit))
	if err != nil || len(msgs) == 0 {
		return msgs, err
	}
	deleted, err := scanAll(t, ctx, "read own tombstones", func(r Row) (int64, error) {
		var seq int64
		return seq, r.Scan(&seq)
	}, `SELECT seq FROM message_deletions WHERE session_id = ? AND seq >= ? AND seq <= ?`, s.ID, msgs[0].Seq, msgs[len(msgs)-1].Seq)
	if err != nil {
		return nil, err
	}
	gone := map[int64]bool{}
	for _, seq := range deleted {
		gone[seq] = true
	}
	for _, m := range msgs {
		if gone[m.Seq] {
			m.Deleted, m.Content, m.ToolCalls, m.Metadata = true, "", nil, nil
		}
	}
	return msgs, nil
}

// InsertTombstones stores the tombstones ts of the owner's session as given.
func (t *Tx) InsertTombstones(ctx context.Context, owner, sessionID string, ts []*carryon.Message) error {
	if err := t.Writable(); err != nil {
		return err
	}
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return err
	}
	rows := make([][]any, len(ts))
	for i, m := range ts {
		rows[i] = []any{sessionID, m.Seq, m.Version, Micros(m.CreatedAt)}
	}
	i, err := t.Conn.ExecEach(ctx, `INSERT INTO message_deletions (session_id, seq, version, created_at) VALUES (?, ?, ?, ?)`, rows)
	if err != nil && i < len(ts) {
		return t.Conflict(err, "insert tombstones", "message %d of session %s is deleted already", ts[i].Seq, sessionID)
	}
	return t.Wrap(err, "insert tombstones")
}
