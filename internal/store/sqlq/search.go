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
	// Probe returns a condition on one session row, aliased w (its column w.session_key), that
	// holds when one of the session's documents matches q.Terms as Match says, and its
	// arguments: the probe of store.SearchPlanProbe, which asks the index about one session at a
	// time. It reads through c what it needs to write the condition. Unless q.Plan is
	// SearchPlanProbe it returns an empty condition where probing is not cheaper than collecting
	// (few matches: fewer than q.ProbeAbove where set).
	Probe func(ctx context.Context, c Conn, q store.SessionQuery) (string, []any, error)
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
	if t.search != nil {
		t.search.member = append(t.search.member, rows...)
		return nil
	}
	if _, err := t.Conn.ExecEach(ctx, t.d.SessionSearch.Insert, rows); err != nil {
		return t.Wrap(err, "index messages")
	}
	return nil
}

// unindexMessage removes the search document of message seq of the session whose key is key.
func (t *Tx) unindexMessage(ctx context.Context, key, seq int64) error {
	if err := t.FlushSearch(ctx); err != nil {
		return err
	}
	_, err := t.Conn.Exec(ctx, t.d.SessionSearch.Delete, key, seq)
	return t.Wrap(err, "unindex message")
}

// unindexSession removes every search document of the session whose key is key.
func (t *Tx) unindexSession(ctx context.Context, key int64) error {
	if t.d.SessionSearch.DeleteSession == "" {
		return nil
	}
	if err := t.FlushSearch(ctx); err != nil {
		return err
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
	if err := t.FlushSearch(ctx); err != nil {
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

// probeSessions runs the probe plan of a search (store.SearchPlanProbe; SearchPlanAuto within
// its window): the sessions of where (sessionFilters), newest first, each kept if its title
// holds every term or the driver's probe finds a document of it that matches, up to q.Limit.
// SearchPlanAuto probes at most the window's newest sessions and answers only when the page
// fills there, since then no older session can be on it; ok is false when it did not answer.
func (t *Tx) probeSessions(ctx context.Context, where string, args []any, q store.SessionQuery) ([]*carryon.Session, bool, error) {
	force := q.Plan == store.SearchPlanProbe
	probe, probeArgs, err := t.d.SessionSearch.Probe(ctx, t.Conn, q)
	if err != nil {
		return nil, false, t.Wrap(err, "search sessions")
	}
	if probe == "" {
		return nil, false, nil
	}
	window := Limit(0)
	if !force {
		window = int64(max(4*q.Limit, q.ProbeWindow))
		if q.ProbeWindow <= 0 {
			window = int64(max(4*q.Limit, store.DefaultProbeWindow))
		}
	}
	title, titleArgs := titleMatches(q.Terms)
	query := `SELECT ` + sessionCols + ` FROM (SELECT ` + sessionCols + `, session_key FROM sessions` + where +
		` ORDER BY created_at DESC, id DESC` + limitArg + `) w WHERE (` + title + `) OR ` + probe +
		` ORDER BY created_at DESC, id DESC` + limitArg
	args = append(append(append(append(args, window), titleArgs...), probeArgs...), Limit(q.Limit))
	page, err := scanAll(t, ctx, "search sessions", scanSession, query, args...)
	if err != nil {
		return nil, false, err
	}
	return page, force || len(page) == q.Limit, nil
}

// collectMatches adds to where and args the text condition of the collecting plan: the title
// holds every term, or the session is among those the driver's Match names.
func (t *Tx) collectMatches(where string, args []any, terms []string) (string, []any) {
	title, titleArgs := titleMatches(terms)
	sub, subArgs := t.d.SessionSearch.Match(terms)
	return where + ` AND ((` + title + `) OR session_key IN (` + sub + `))`, append(append(args, titleArgs...), subArgs...)
}

// titleMatches is the condition that a session's title holds every one of terms as a substring,
// case folded, and its arguments.
func titleMatches(terms []string) (string, []any) {
	cond := `1 = 1`
	var args []any
	for _, term := range terms {
		cond += ` AND lower(title) LIKE ?`
		args = append(args, "%"+term+"%")
	}
	return cond, args
}

// searchConditions appends to query and args the conditions of q beyond status, external id,
// text and paging: metadata, agent and time bounds.
func (t *Tx) searchConditions(query string, args []any, q store.SessionQuery) (string, []any) {
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
