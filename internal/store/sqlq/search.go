package sqlq

import (
	"context"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// Session search. Every session has one search document per message it shows (its own and those
// it inherits through its fork chain), under (session key, seq), in the driver's full-text index
// (SessionSearch). The documents follow the messages in the transaction of each change:
// InsertMessages adds them, a tombstone (DeleteMessage) removes its session's one, a fork gets
// copies of its parent's (IndexFork), and deleting or forgetting a session removes its own. A
// search therefore never reads a tombstone table: a deleted message has no document in the
// session that deleted it.

// SessionSearch is how a driver keeps and matches the search documents of session search. The
// statements take ?NNN placeholders.
type SessionSearch struct {
	// Insert stores the document ?3 for seq ?2 of the session whose key is ?1.
	Insert string
	// Delete removes the document of seq ?2 of the session whose key is ?1.
	Delete string
	// DeleteSession removes every document of the session whose key is ?1; empty where the
	// database does it when the session row goes (a foreign key with ON DELETE CASCADE).
	DeleteSession string
	// ForgetBatch removes up to ?2 documents of the session whose id is ?1 (keyOf1).
	ForgetBatch string
	// CopyFork copies the documents of seqs 1 to ?3 of the session whose key is ?2 to the
	// session whose key is ?1.
	CopyFork string
	// Match returns a subquery selecting the keys of the sessions with a document holding every
	// one of terms as a word, the last also as the start of one (terms from
	// store.SearchQueryTerms: letters and digits only), and its arguments.
	Match func(terms []string) (string, []any)
	// StorageFrom names the documents of sessions as x joined to their session as s (in an
	// order that reaches one session's documents through its row), and StorageBytes the bytes
	// one document x takes, for the storage reports (SessionStorage, UserStorage).
	StorageFrom, StorageBytes string
	// MetadataEquals returns a condition on sessions' metadata column: the top-level key holds
	// the JSON string value (key from store.MetadataKeyChars), and its arguments.
	MetadataEquals func(key, value string) (string, []any)
}

// indexMessages stores the search documents of msgs (keys: their sessions' keys).
func (t *Tx) indexMessages(ctx context.Context, msgs []*carryon.Message, keys map[string]int64) error {
	var rows [][]any
	for _, m := range msgs {
		if m.Content != "" {
			rows = append(rows, []any{keys[m.SessionID], m.Seq, store.SearchDocument(m.Content)})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	if _, err := t.Conn.ExecEach(ctx, t.d.SessionSearch.Insert, rows); err != nil {
		return t.Wrap(err, "index messages")
	}
	return nil
}

// unindexMessage removes the search document of message seq of the session whose key is key.
func (t *Tx) unindexMessage(ctx context.Context, key, seq int64) error {
	_, err := t.Conn.Exec(ctx, t.d.SessionSearch.Delete, key, seq)
	return t.Wrap(err, "unindex message")
}

// unindexSession removes every search document of the session whose key is key.
func (t *Tx) unindexSession(ctx context.Context, key int64) error {
	if t.d.SessionSearch.DeleteSession == "" {
		return nil
	}
	_, err := t.Conn.Exec(ctx, t.d.SessionSearch.DeleteSession, key)
	return t.Wrap(err, "unindex session")
}

// IndexFork gives the fork child the search documents of the messages it shows, at its creation
// (after CopyMessageDeletions): a copy of its parent's documents of seqs 1 to child.ForkSeq, which
// are the parent's visible messages there; then those the parent deleted after version at that
// the child still shows (CopyMessageDeletions gave it no tombstone for them), read through the
// child's chain. The cost is one statement and the parent's documents copied: a fork stays one
// row of its own in every table but this index.
func (t *Tx) IndexFork(ctx context.Context, owner string, child *carryon.Session, at int64) error {
	if err := t.Writable(); err != nil {
		return err
	}
	key, err := t.ownKey(ctx, owner, child.ID)
	if err != nil {
		return err
	}
	parent, err := t.ownKey(ctx, owner, child.ParentID)
	if err != nil {
		return err
	}
	if _, err := t.Conn.Exec(ctx, t.d.SessionSearch.CopyFork, key, parent, child.ForkSeq); err != nil {
		return t.Wrap(err, "index fork")
	}
	later, err := scanAll(t, ctx, "index fork", func(r Row) (int64, error) {
		var seq int64
		err := r.Scan(&seq)
		return seq, err
	}, `SELECT d.seq FROM message_deletions d WHERE d.session_id = ? AND d.version > ? AND d.seq <= ?
		AND NOT EXISTS (SELECT 1 FROM message_deletions c WHERE c.session_id = ? AND c.seq = d.seq) ORDER BY d.seq`,
		child.ParentID, at, child.ForkSeq, child.ID)
	if err != nil {
		return err
	}
	for _, seq := range later {
		ms, err := t.MessagesAfter(ctx, owner, child, seq-1, 1)
		if err != nil {
			return err
		}
		if len(ms) == 1 && ms[0].Seq == seq {
			if err := t.indexMessages(ctx, ms, map[string]int64{child.ID: key}); err != nil {
				return err
			}
		}
	}
	return nil
}

// searchConditions appends to query and args the conditions of q beyond status, external id and
// paging: the text, metadata, agent and time bounds.
func (t *Tx) searchConditions(query string, args []any, q store.SessionQuery) (string, []any) {
	if len(q.Terms) > 0 {
		title := ""
		for _, term := range q.Terms {
			title += ` AND lower(title) LIKE ?`
			args = append(args, "%"+term+"%")
		}
		sub, subArgs := t.d.SessionSearch.Match(q.Terms)
		query += ` AND ((1 = 1` + title + `) OR session_key IN (` + sub + `))`
		args = append(args, subArgs...)
	}
	for _, m := range q.Metadata {
		cond, condArgs := t.d.SessionSearch.MetadataEquals(m.Key, m.Value)
		query += ` AND ` + cond
		args = append(args, condArgs...)
	}
	if q.Agent != "" {
		query += ` AND agent = ?`
		args = append(args, q.Agent)
	}
	for _, b := range []struct {
		cond string
		at   int64
		set  bool
	}{
		{` AND created_at > ?`, Micros(q.CreatedAfter), !q.CreatedAfter.IsZero()},
		{` AND created_at < ?`, Micros(q.CreatedBefore), !q.CreatedBefore.IsZero()},
		{` AND updated_at > ?`, Micros(q.UpdatedAfter), !q.UpdatedAfter.IsZero()},
		{` AND updated_at < ?`, Micros(q.UpdatedBefore), !q.UpdatedBefore.IsZero()},
	} {
		if b.set {
			query += b.cond
			args = append(args, b.at)
		}
	}
	return query, args
}
