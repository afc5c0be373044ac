package sqlq

import (
	"context"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/store"
)

// memo is what a write transaction has read and may read again without asking the database: the
// keys of the sessions it has seen (a session's key and owner never change; a deleted session's
// entry goes with it) and, where writers are serialised (no Dialect.LockForUpdate), the working
// memory document it read or wrote last. A batch of group commit shares one transaction among its
// members, so it forgets all between members (Forget): a member rolled back to its savepoint
// leaves nothing behind for the next. Nil until the first entry.
type memo struct {
	keys map[string]int64 // owner + "\x00" + id → session_key

	memSession string // the session whose document memDoc is, "" for none
	memDoc     string
	memVersion int64
}

// Forget drops what the transaction remembers of its reads (see memo). Group commit calls it
// before each member.
func (t *Tx) Forget() { t.memo = nil }

func memoKey(owner, id string) string { return owner + "\x00" + id }

// rememberKey notes the key of the owner's session id.
func (t *Tx) rememberKey(owner, id string, key int64) {
	if t.memo == nil {
		t.memo = &memo{}
	}
	if t.memo.keys == nil {
		t.memo.keys = map[string]int64{}
	}
	t.memo.keys[memoKey(owner, id)] = key
}

// ownKey returns the key of the owner's session: the small integer its messages, their writes
// and its memory revisions are stored under (sessions.session_key). ENOTFOUND.
func (t *Tx) ownKey(ctx context.Context, owner, id string) (int64, error) {
	if t.memo != nil {
		if k, ok := t.memo.keys[memoKey(owner, id)]; ok {
			return k, nil
		}
	}
	l, err := t.ownLink(ctx, owner, id, "")
	return l.Key, err
}

// chainOf is chain of s, a session the transaction has read: one without a parent whose key it
// remembers needs no query, as its chain is its own rows (s.LastSeq estimates how many).
func (t *Tx) chainOf(ctx context.Context, owner string, s *carryon.Session) ([]store.ForkSegment, *store.ForkSegment, int64, error) {
	if t.memo != nil && s.ParentID == "" {
		if k, ok := t.memo.keys[memoKey(owner, s.ID)]; ok {
			return store.Chain(store.ForkLink{ID: s.ID, Key: k}, nil), nil, s.LastSeq, nil
		}
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
