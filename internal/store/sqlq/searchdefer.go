package sqlq

import "context"

// searchQueue holds back the search documents a batch of group commit inserts until the batch's
// end. SQLite's FTS5 writes what it holds in memory to a new segment of the index at every
// savepoint, and each member of a batch runs under one: inserted at once, every append would
// make a segment of its own (a tenth of the server's CPU at 64 writers, and an index of many
// small segments, slower to search and to delete from). Held back, a batch makes one.
//
// A member that reads or deletes search documents (IndexFork, a message's or a session's
// delete, a forget, a storage count) first inserts what is held back (FlushSearch), inside its
// own savepoint: if it then fails, the earlier members' documents it inserted are held back
// again, and its own are dropped with the rest of it.
type searchQueue struct {
	pending [][]any // the documents of the members that succeeded, not inserted yet
	member  [][]any // the documents of the running member, not inserted yet
	flushed [][]any // pending documents inserted inside the running member's savepoint
}

// HoldSearch makes the transaction hold back its search documents until FlushSearch: group
// commit calls it on a batch's transaction, and MemberEnded after each member.
func (t *Tx) HoldSearch() { t.search = &searchQueue{} }

// MemberEnded tells a transaction that holds back its search documents that a member of its
// batch ended: released (ok), its documents held for the batch's end, or rolled back to its
// savepoint, its documents dropped and the earlier members' it had inserted held back again.
func (t *Tx) MemberEnded(ok bool) {
	q := t.search
	if q == nil {
		return
	}
	if ok {
		q.pending = append(q.pending, q.member...)
	} else {
		q.pending = append(q.flushed, q.pending...)
	}
	q.member, q.flushed = nil, nil
}

// FlushSearch inserts the search documents held back: group commit calls it at a batch's end,
// outside the members' savepoints, before the commit, and every statement that reads or deletes
// search documents first.
func (t *Tx) FlushSearch(ctx context.Context) error {
	q := t.search
	if q == nil || len(q.pending)+len(q.member) == 0 {
		return nil
	}
	rows := append(append([][]any{}, q.pending...), q.member...)
	if _, err := t.Conn.ExecEach(ctx, t.d.SessionSearch.Insert, rows); err != nil {
		return t.Wrap(err, "index messages")
	}
	q.flushed = append(q.flushed, q.pending...)
	q.pending, q.member = nil, nil
	return nil
}
