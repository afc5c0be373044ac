package sqlite

import (
	"context"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store/sqlq"
)

// ForgetUserRows deletes the search documents of the long-term items the shared statement
// deletes next (the owner's first by namespace and key, the same choice in the same transaction), then the items
// and request ids.
func (t *tx) ForgetUserRows(ctx context.Context, owner string, limit int) (carryon.ForgetCounts, error) {
	if err := t.WritableBy(owner); err != nil {
		return carryon.ForgetCounts{}, err
	}
	_, err := t.Conn.Exec(ctx, `DELETE FROM memories_fts WHERE rowid IN
		(SELECT id FROM memories WHERE owner_id = ? ORDER BY namespace, key LIMIT ?)`, owner, sqlq.Limit(limit))
	if err != nil {
		return carryon.ForgetCounts{}, t.Wrap(err, "forget search documents")
	}
	return t.Tx.ForgetUserRows(ctx, owner, limit)
}

// DeleteForgottenUser deletes the user's row and, when it had long-term items, merges the
// full-text index into one segment ('optimize'): FTS5 records a deletion as a marker beside the
// old entries, which stay in the index's pages until a merge, so without it the forgotten items'
// terms (and the owner's token) would still be readable in memories_fts_data. It costs a rewrite
// of the index, once per forgotten user who had items.
func (t *tx) DeleteForgottenUser(ctx context.Context, userID string) (*carryon.ForgetReceipt, error) {
	r, err := t.Tx.DeleteForgottenUser(ctx, userID)
	if err != nil || r.Deleted.LongTermItems == 0 {
		return r, err
	}
	_, err = t.Conn.Exec(ctx, `INSERT INTO memories_fts (memories_fts) VALUES ('optimize')`)
	return r, t.Wrap(err, "optimize the search index")
}
