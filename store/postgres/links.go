package postgres

import (
	"context"
	"errors"

	"github.com/carryon-hub/carryon/store"
	"github.com/jackc/pgx/v5"
)

// link and segment are the fork chain's pieces; the walks over them are in package store.
type (
	link    = store.ForkLink
	segment = store.ForkSegment
)

// ownLink returns the chain link of the owner's session, with lock appended to the query (a
// row-locking clause or ""). ENOTFOUND when missing or foreign.
func (t *tx) ownLink(ctx context.Context, owner, id, lock string) (link, error) {
	l := link{ID: id}
	var parent *string
	err := t.tx.QueryRow(ctx, `SELECT parent_id, fork_seq FROM sessions WHERE id = $1 AND owner_id = $2`+lock,
		id, owner).Scan(&parent, &l.ForkSeq)
	if errors.Is(err, pgx.ErrNoRows) {
		return l, notFound("session", id)
	} else if err != nil {
		return l, wrap(err, "get session")
	}
	if parent != nil {
		l.ParentID = *parent
	}
	return l, nil
}

// ownSession checks that the session exists and is the owner's. ENOTFOUND.
func (t *tx) ownSession(ctx context.Context, owner, id string) error {
	_, err := t.ownLink(ctx, owner, id, "")
	return err
}

// parentLink returns the link of l's parent, which must exist.
func (t *tx) parentLink(ctx context.Context, l link) (link, error) {
	p := link{ID: l.ParentID}
	var parent *string
	err := t.tx.QueryRow(ctx, `SELECT parent_id, fork_seq FROM sessions WHERE id = $1`, l.ParentID).Scan(&parent, &p.ForkSeq)
	if err != nil {
		return p, wrap(err, "read fork parent of "+l.ID)
	}
	if parent != nil {
		p.ParentID = *parent
	}
	return p, nil
}

// parentOf returns the chain walks' way to read a parent's link in this transaction.
func (t *tx) parentOf(ctx context.Context) store.ParentFunc {
	return func(l link) (link, error) { return t.parentLink(ctx, l) }
}
