package sqlq

import (
	"context"
	"errors"

	"github.com/carryon-hub/carryon/store"
)

// The fork chain's walks are in package store; these read its links.

// ownLink returns the chain link of the owner's session, with lock appended to the query (a
// row-locking clause or ""). ENOTFOUND when missing or foreign.
func (t *Tx) ownLink(ctx context.Context, owner, id, lock string) (store.ForkLink, error) {
	l := store.ForkLink{ID: id}
	var parent *string
	err := t.Conn.QueryRow(ctx, `SELECT parent_id, fork_seq FROM sessions WHERE id = ? AND owner_id = ?`+lock,
		id, owner).Scan(&parent, &l.ForkSeq)
	if errors.Is(err, ErrNoRows) {
		return l, NotFound("session", id)
	} else if err != nil {
		return l, t.Wrap(err, "get session")
	}
	l.ParentID = Text(parent)
	return l, nil
}

// ownSession checks that the session exists and is the owner's. ENOTFOUND.
func (t *Tx) ownSession(ctx context.Context, owner, id string) error {
	_, err := t.ownLink(ctx, owner, id, "")
	return err
}

// parentOf returns the chain walks' way to read a parent's link in this transaction.
func (t *Tx) parentOf(ctx context.Context) store.ParentFunc {
	return func(l store.ForkLink) (store.ForkLink, error) {
		p := store.ForkLink{ID: l.ParentID}
		var parent *string
		err := t.Conn.QueryRow(ctx, `SELECT parent_id, fork_seq FROM sessions WHERE id = ?`, l.ParentID).Scan(&parent, &p.ForkSeq)
		if err != nil {
			return p, t.Wrap(err, "read fork parent of "+l.ID)
		}
		p.ParentID = Text(parent)
		return p, nil
	}
}
