package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/sqlq"
)

// Long-term memory. Items live in memories and their search documents in the FTS5 table
// memories_fts (rowid = memories.id; columns doc, the document, and owner, the owner's token),
// which this file keeps in sync inside the same transaction. A search matches the FTS5 expression
// owner : "<owner token>" AND doc : ("t1" OR "t2" …) built from store.SearchTerms (every term
// quoted; terms hold only letters and digits, so no FTS5 syntax can get in): the index itself
// keeps only the owner's rows, so other users' matches are never read, ranked or joined. The
// matches are joined back to memories, where the shared search of package sqlq keeps the owner's
// unexpired rows in the namespace subtree (the owner again, as every query does), ranked by
// bm25() with the owner column weighted 0. bm25's term statistics are those of the whole table,
// so other users' items can shift the weights of terms (never which items match); the memory
// service reports scores relative to the best result only.

// longTermSearch matches the FTS5 expression of searchMatch and ranks by bm25() (negated: higher is
// better), the owner column weighted 0.
func longTermSearch(owner string, terms []string) sqlq.LongTermSearch {
	return sqlq.LongTermSearch{
		From:  `memories_fts JOIN memories m ON m.id = memories_fts.rowid`,
		Score: `-bm25(memories_fts, 1.0, 0.0)`,
		Match: `memories_fts MATCH ?`, MatchArgs: []any{searchMatch(owner, terms)},
	}
}

// ownerToken is how the full-text index names an owner: the upper-case hex of the id's bytes,
// one token for the unicode61 tokenizer whatever the id holds (SQL: hex(owner_id)).
func ownerToken(owner string) string { return fmt.Sprintf("%X", owner) }

// searchMatch is the FTS5 expression that matches the owner's documents holding any of terms.
func searchMatch(owner string, terms []string) string {
	return `owner : "` + ownerToken(owner) + `" AND doc : (` + strings.Join(sqlq.QuoteEach(terms, `"`), " OR ") + `)`
}

// PutLongTermItem inserts the item or replaces the owner's item with the same (namespace, key),
// and rewrites its search document.
func (t *tx) PutLongTermItem(ctx context.Context, owner string, it *carryon.LongTermItem) error {
	if err := t.WritableBy(owner); err != nil {
		return err
	}
	var id int64
	err := t.Conn.QueryRow(ctx, `INSERT INTO memories (owner_id, namespace, key, value, text, created_at, updated_at, expires_at, version)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (owner_id, namespace, key) DO UPDATE SET value = excluded.value, text = excluded.text,
		created_at = excluded.created_at, updated_at = excluded.updated_at, expires_at = excluded.expires_at,
		version = excluded.version, embedding = NULL, embedding_model = NULL
		RETURNING id`,
		owner, it.Namespace, it.Key, string(it.Value), it.Text, sqlq.Micros(it.CreatedAt), sqlq.Micros(it.UpdatedAt),
		sqlq.NullMicros(it.ExpiresAt), it.Version).Scan(&id)
	if err != nil {
		return t.Wrap(err, "put memory item")
	}
	if _, err := t.Conn.Exec(ctx, `DELETE FROM memories_fts WHERE rowid = ?`, id); err != nil {
		return t.Wrap(err, "index memory item")
	}
	if _, err = t.Conn.Exec(ctx, `INSERT INTO memories_fts (rowid, doc, owner) VALUES (?, ?, ?)`, id,
		store.LongTermDocument(it), ownerToken(owner)); err != nil {
		return t.Wrap(err, "index memory item")
	}
	return t.LongTermChanged(ctx, owner)
}

// DeleteLongTermItem removes the owner's item and its search document. ENOTFOUND when there is none.
func (t *tx) DeleteLongTermItem(ctx context.Context, owner, namespace, key string) error {
	if err := t.WritableBy(owner); err != nil {
		return err
	}
	var id int64
	err := t.Conn.QueryRow(ctx, `DELETE FROM memories WHERE owner_id = ? AND namespace = ? AND key = ? RETURNING id`,
		owner, namespace, key).Scan(&id)
	if errors.Is(err, sqlq.ErrNoRows) {
		return sqlq.NotFound("memory item", namespace+"/"+key)
	} else if err != nil {
		return t.Wrap(err, "delete memory item")
	}
	if _, err = t.Conn.Exec(ctx, `DELETE FROM memories_fts WHERE rowid = ?`, id); err != nil {
		return t.Wrap(err, "delete memory item")
	}
	return t.LongTermDeleted(ctx, owner, namespace, key)
}

// PurgeExpiredLongTermItems removes every item of any owner that expired before t, with its search
// document, and returns how many.
func (t *tx) PurgeExpiredLongTermItems(ctx context.Context, before time.Time) (int64, error) {
	if err := t.Writable(); err != nil {
		return 0, err
	}
	if err := t.LongTermPurging(ctx, before); err != nil {
		return 0, err
	}
	if _, err := t.Conn.Exec(ctx, `DELETE FROM memories_fts WHERE rowid IN
		(SELECT id FROM memories WHERE expires_at IS NOT NULL AND expires_at < ?)`, sqlq.Micros(before)); err != nil {
		return 0, t.Wrap(err, "purge memory items")
	}
	n, err := t.Conn.Exec(ctx, `DELETE FROM memories WHERE expires_at IS NOT NULL AND expires_at < ?`, sqlq.Micros(before))
	return n, t.Wrap(err, "purge memory items")
}
