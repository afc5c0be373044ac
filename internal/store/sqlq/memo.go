package sqlq

import (
	"context"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// memo is what a transaction has read and may read again without asking the database: the keys
// of the sessions it has seen (a session's key and owner never change; a deleted session's entry
// goes with it), the fork chains a read transaction read with its sessions, and, where writers
// are serialised (no Dialect.LockForUpdate), the working memory document a write read or wrote
// last, and the seq of the last event it stored of each run. A batch of group commit shares one transaction among its members, so it forgets all
// between members (Forget): a member rolled back to its savepoint leaves nothing behind for the
// next. Nil until the first entry.
type memo struct {
	sessions map[string]memoSession // by owner + "\x00" + id

	memSession string // the session whose document memDoc is, "" for none
	memDoc     string
	memVersion int64

	// eventSeqs are the last event seqs a write stored, by owner + "\x00" + run id: the run is
	// the owner's and locked (AppendEvent checked it), and its next event is the next seq.
	eventSeqs map[string]int64
}

// memoSession is what the memo knows of a session: its key and, when chained, the segments it
// inherits and the tail after them (its fork_chains row, see chainWhere).
type memoSession struct {
	key       int64
	chained   bool
	inherited []store.ForkSegment
	tail      *store.ForkSegment
}

// Forget drops what the transaction remembers of its reads (see memo). Group commit calls it
// before each member.
func (t *Tx) Forget() { t.memo = nil }

func memoKey(owner, id string) string { return owner + "\x00" + id }

// rememberKey notes the key of the owner's session id.
func (t *Tx) rememberKey(owner, id string, key int64) {
	t.remember(owner, id, memoSession{key: key})
}

func (t *Tx) remember(owner, id string, ms memoSession) {
	if t.memo == nil {
		t.memo = &memo{}
	}
	if t.memo.sessions == nil {
		t.memo.sessions = map[string]memoSession{}
	}
	if prev, ok := t.memo.sessions[memoKey(owner, id)]; ok && prev.chained && !ms.chained {
		return // keep the chain
	}
	t.memo.sessions[memoKey(owner, id)] = ms
}

func (t *Tx) remembered(owner, id string) (memoSession, bool) {
	if t.memo == nil {
		return memoSession{}, false
	}
	ms, ok := t.memo.sessions[memoKey(owner, id)]
	return ms, ok
}

// ownKey returns the key of the owner's session: the small integer its messages, their writes
// and its memory revisions are stored under (sessions.session_key). ENOTFOUND.
func (t *Tx) ownKey(ctx context.Context, owner, id string) (int64, error) {
	if ms, ok := t.remembered(owner, id); ok {
		return ms.key, nil
	}
	l, err := t.ownLink(ctx, owner, id, "")
	return l.Key, err
}

// chainOf is chain of s, a session the transaction has read: one without a parent whose key it
// remembers needs no query, as its chain is its own rows, and nor does a fork whose chain it read
// with the session (s.LastSeq estimates how many rows the session's own segment holds).
func (t *Tx) chainOf(ctx context.Context, owner string, s *carryon.Session) ([]store.ForkSegment, *store.ForkSegment, int64, error) {
	if ms, ok := t.remembered(owner, s.ID); ok && (s.ParentID == "" || ms.chained) {
		head := store.ForkLink{ID: s.ID, Key: ms.key, ParentID: s.ParentID, ForkSeq: s.ForkSeq}
		return store.Chain(head, ms.inherited), ms.tail, s.LastSeq, nil
	}
	return t.chain(ctx, owner, s.ID)
}

// ownSession checks that the session exists and is the owner's. ENOTFOUND.
func (t *Tx) ownSession(ctx context.Context, owner, id string) error {
	_, err := t.ownKey(ctx, owner, id)
	return err
}

// rememberDoc notes the working memory document of a session at memory version mv, where
// writers are serialised: elsewhere another transaction may write it between two reads of this
// one.
func (t *Tx) rememberDoc(sessionID, doc string, mv int64) {
	if t.ReadOnly || t.d.LockForUpdate != "" {
		return
	}
	if t.memo == nil {
		t.memo = &memo{}
	}
	t.memo.memSession, t.memo.memDoc, t.memo.memVersion = sessionID, doc, mv
}

// rememberedDoc returns the document rememberDoc noted for sessionID, if any.
func (t *Tx) rememberedDoc(sessionID string) (doc string, mv int64, ok bool) {
	if t.memo == nil || t.memo.memSession != sessionID || sessionID == "" {
		return "", 0, false
	}
	return t.memo.memDoc, t.memo.memVersion, true
}

// lastEventSeq returns the seq of the owner's run's last event this transaction stored.
func (t *Tx) lastEventSeq(owner, runID string) (int64, bool) {
	if t.memo == nil {
		return 0, false
	}
	seq, ok := t.memo.eventSeqs[memoKey(owner, runID)]
	return seq, ok
}

// storedEvent remembers that this transaction stored the owner's run's event seq.
func (t *Tx) storedEvent(owner, runID string, seq int64) {
	if t.memo == nil {
		t.memo = &memo{}
	}
	if t.memo.eventSeqs == nil {
		t.memo.eventSeqs = map[string]int64{}
	}
	t.memo.eventSeqs[memoKey(owner, runID)] = seq
}
