package sqlq

import (
	"context"
	"slices"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// visibleTo is the condition that hides the messages a session deleted: appended to a query of
// the messages table (as m), with the reading session's id as its argument.
const visibleTo = ` AND NOT EXISTS (SELECT 1 FROM message_deletions d WHERE d.session_id = ? AND d.seq = m.seq)`

// DeleteMessage hides the visible message seq of s from every later read of s by a tombstone at
// session version v, and redacts the copies of its text in the same transaction (redact.go): the
// row is erased unless a fork still sees it, and the copies tied to s (its runs and their events,
// a title derived from it, its request ids' answers) are emptied. A summary of s that covers the
// message is deleted with it (s.MessageCount is lowered by one for each such summary; the
// message itself is the caller's to count), and a derived title is cleared in s: the caller
// stores s. ENOTFOUND when s has no visible message seq (never stored, beyond the fork point, or
// deleted already).
func (t *Tx) DeleteMessage(ctx context.Context, owner string, s *carryon.Session, seq, v int64, at time.Time) error {
	if err := t.Writable(); err != nil {
		return err
	}
	if err := t.deleteMessage(ctx, owner, s, seq, v, at); err != nil {
		return err
	}
	return nil
}

// deleteMessage is DeleteMessage of one message, then of the summaries that cover it.
func (t *Tx) deleteMessage(ctx context.Context, owner string, s *carryon.Session, seq, v int64, at time.Time) error {
	if seq < 1 {
		return carryon.Errorf(carryon.ENOTFOUND, "session %s has no message %d", s.ID, seq)
	}
	ms, err := t.MessagesAfter(ctx, owner, s, seq-1, 1)
	if err != nil {
		return err
	}
	if len(ms) == 0 || ms[0].Seq != seq {
		return carryon.Errorf(carryon.ENOTFOUND, "session %s has no message %d", s.ID, seq)
	}
	_, err = t.Conn.Exec(ctx, `INSERT INTO message_deletions (session_id, seq, version, created_at) VALUES (?, ?, ?, ?)`,
		s.ID, seq, v, Micros(at))
	if err != nil {
		return t.Conflict(err, "delete message", "message %d of session %s is deleted already", seq, s.ID)
	}
	key, err := t.ownKey(ctx, owner, s.ID)
	if err != nil {
		return err
	}
	if err := t.unindexMessage(ctx, key, seq); err != nil {
		return err
	}
	summaries, err := t.redact(ctx, owner, s, ms[0])
	if err != nil {
		return err
	}
	for _, sum := range summaries {
		if err := t.deleteMessage(ctx, owner, s, sum, v, at); err != nil {
			return err
		}
		s.MessageCount--
	}
	return nil
}

// CopyMessageDeletions gives the fork child (already stored, at version 1) the tombstones its
// parent had at parent version at on the history it shares (seq <= child.ForkSeq), and returns how
// many it copied. Tombstones the parent makes later are its own: the fork keeps those messages,
// unless the row is erased already (no session sees it: redact.go), which no fork brings back.
func (t *Tx) CopyMessageDeletions(ctx context.Context, owner string, child *carryon.Session, at int64) (int64, error) {
	if err := t.Writable(); err != nil {
		return 0, err
	}
	if err := t.ownSession(ctx, owner, child.ParentID); err != nil {
		return 0, err
	}
	n, err := t.Conn.Exec(ctx, `INSERT INTO message_deletions (session_id, seq, version, created_at)
		SELECT ?, seq, 1, created_at FROM message_deletions WHERE session_id = ? AND version <= ? AND seq <= ?`,
		child.ID, child.ParentID, at, child.ForkSeq)
	if err != nil {
		return 0, t.Wrap(err, "copy message deletions")
	}
	type later struct{ seq, created int64 }
	gone, err := scanAll(t, ctx, "read later message deletions", func(r Row) (later, error) {
		var d later
		err := r.Scan(&d.seq, &d.created)
		return d, err
	}, `SELECT seq, created_at FROM message_deletions WHERE session_id = ? AND version > ? AND seq <= ? ORDER BY seq`,
		child.ParentID, at, child.ForkSeq)
	if err != nil || len(gone) == 0 {
		return n, err
	}
	head, err := t.ownLink(ctx, owner, child.ParentID, "")
	if err != nil {
		return 0, err
	}
	segs, err := store.ForkSegments(head, 0, t.parentOf(ctx))
	if err != nil {
		return 0, err
	}
	for _, d := range gone {
		i := slices.IndexFunc(segs, func(sg store.ForkSegment) bool { return sg.Lo < d.seq && d.seq <= sg.Hi })
		if i < 0 {
			continue
		}
		if seen, err := t.seen(ctx, segs[i].Key, d.seq, child.ID); err != nil {
			return 0, err
		} else if seen {
			continue
		}
		if _, err := t.Conn.Exec(ctx, `INSERT INTO message_deletions (session_id, seq, version, created_at) VALUES (?, ?, 1, ?)`,
			child.ID, d.seq, d.created); err != nil {
			return 0, t.Wrap(err, "copy message deletions")
		}
		n++
	}
	return n, nil
}

// MessageTombstones returns the tombstones of s with after < seq <= upTo, in seq order (a fork's
// are its own rows: the copies CopyMessageDeletions made and its own deletes), each with the
// role and kind of the message it hides, read from the session of the fork chain that stored it;
// never its content.
func (t *Tx) MessageTombstones(ctx context.Context, owner string, s *carryon.Session, after, upTo int64) ([]*carryon.Message, error) {
	head, err := t.ownLink(ctx, owner, s.ID, "")
	if err != nil {
		return nil, err
	}
	segs, err := store.ForkSegments(head, after, t.parentOf(ctx))
	if err != nil {
		return nil, err
	}
	var out []*carryon.Message
	for _, sg := range slices.Backward(segs) { // the root's (lowest seqs) first
		lo, hi := max(after, sg.Lo), min(upTo, sg.Hi)
		if lo >= hi {
			continue
		}
		got, err := scanAll(t, ctx, "read message tombstones", func(r Row) (*carryon.Message, error) {
			m := carryon.Message{SessionID: s.ID, Deleted: true}
			var role string
			var created int64
			if err := r.Scan(&m.Seq, &m.Version, &created, &role, &m.Kind); err != nil {
				return nil, err
			}
			m.Role, m.CreatedAt = carryon.Role(role), FromMicros(created)
			if m.Kind == "" {
				m.Kind = carryon.KindMessage // stored as "" (see InsertMessages)
			}
			return &m, nil
		}, `SELECT d.seq, d.version, d.created_at, m.role, m.kind FROM message_deletions d
			JOIN messages m ON m.session_key = ? AND m.seq = d.seq
			WHERE d.session_id = ? AND d.seq > ? AND d.seq <= ? ORDER BY d.seq`, sg.Key, s.ID, lo, hi)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}
