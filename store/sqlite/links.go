package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/carryon-hub/carryon/store"
)

// link and segment are the fork chain's pieces; the walks over them are in package store.
type (
	link    = store.ForkLink
	segment = store.ForkSegment
)

// ownLink returns the chain link of the owner's session. ENOTFOUND when missing or foreign.
func (t *tx) ownLink(ctx context.Context, owner, id string) (link, error) {
	l := link{ID: id}
	var parent sql.NullString
	err := t.tx.QueryRowContext(ctx, `SELECT parent_id, fork_seq FROM sessions WHERE id = ? AND owner_id = ?`,
		id, owner).Scan(&parent, &l.ForkSeq)
	if errors.Is(err, sql.ErrNoRows) {
		return l, notFound("session", id)
	} else if err != nil {
		return l, wrap(err, "get session")
	}
	l.ParentID = parent.String
	return l, nil
}

// parentLink returns the link of l's parent, which must exist.
func (t *tx) parentLink(ctx context.Context, l link) (link, error) {
	p := link{ID: l.ParentID}
	var parent sql.NullString
	err := t.tx.QueryRowContext(ctx, `SELECT parent_id, fork_seq FROM sessions WHERE id = ?`, l.ParentID).Scan(&parent, &p.ForkSeq)
	if err != nil {
		return p, wrap(err, "read fork parent of "+l.ID)
	}
	p.ParentID = parent.String
	return p, nil
}

// parentOf returns the chain walks' way to read a parent's link in this transaction.
func (t *tx) parentOf(ctx context.Context) store.ParentFunc {
	return func(l link) (link, error) { return t.parentLink(ctx, l) }
}
