package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/sqlq"
)

// Long-term memory. Each item's search document (store.LongTermDocument) is stored in the doc
// column, from which PostgreSQL generates the tsvector column tsv; the reads are package sqlq's.

// longTermSearch turns store.SearchTerms into the tsquery 't1' | 't2' … (every term quoted; terms
// hold only letters and digits, so no tsquery syntax can get in), matched against the generated
// tsvector column and ranked by ts_rank, which reads nothing but the row itself; the shared search
// keeps only the owner's unexpired rows in the namespace subtree.
func longTermSearch(owner string, terms []string) sqlq.LongTermSearch {
	tsq := strings.Join(sqlq.QuoteEach(terms, `'`), " | ")
	return sqlq.LongTermSearch{
		From:  `memories m`,
		Score: `ts_rank(m.tsv, to_tsquery('simple', ?))::float8`, ScoreArgs: []any{tsq},
		Match: `m.tsv @@ to_tsquery('simple', ?)`, MatchArgs: []any{tsq},
	}
}

// PutLongTermItem inserts the item or replaces the owner's item with the same (namespace, key)
// (INSERT … ON CONFLICT DO UPDATE, so a concurrent insert of the same key replaces instead of
// failing), with its search document.
func (t *tx) PutLongTermItem(ctx context.Context, owner string, it *carryon.LongTermItem) error {
	if err := t.WritableBy(owner); err != nil {
		return err
	}
	_, err := t.Conn.Exec(ctx, `INSERT INTO memories (owner_id, namespace, key, value, text, doc, created_at, updated_at, expires_at, version)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (owner_id, namespace, key) DO UPDATE SET value = excluded.value, text = excluded.text,
		doc = excluded.doc, created_at = excluded.created_at, updated_at = excluded.updated_at, expires_at = excluded.expires_at,
		version = excluded.version, embedding = NULL, embedding_model = NULL`,
		owner, it.Namespace, it.Key, string(it.Value), it.Text, store.LongTermDocument(it), sqlq.Micros(it.CreatedAt),
		sqlq.Micros(it.UpdatedAt), sqlq.NullMicros(it.ExpiresAt), it.Version)
	if err != nil {
		return t.Wrap(err, "put memory item")
	}
	return t.LongTermChanged(ctx, owner)
}

// DeleteLongTermItem removes the owner's item. ENOTFOUND when there is none.
func (t *tx) DeleteLongTermItem(ctx context.Context, owner, namespace, key string) error {
	if err := t.WritableBy(owner); err != nil {
		return err
	}
	n, err := t.Conn.Exec(ctx, `DELETE FROM memories WHERE owner_id = ? AND namespace = ? AND key = ?`, owner, namespace, key)
	if err != nil {
		return t.Wrap(err, "delete memory item")
	}
	if n == 0 {
		return sqlq.NotFound("memory item", namespace+"/"+key)
	}
	return t.LongTermDeleted(ctx, owner, namespace, key)
}

// PurgeExpiredLongTermItems removes every item of any owner that expired before t and returns how many.
func (t *tx) PurgeExpiredLongTermItems(ctx context.Context, before time.Time) (int64, error) {
	if err := t.Writable(); err != nil {
		return 0, err
	}
	if err := t.LongTermPurging(ctx, before); err != nil {
		return 0, err
	}
	n, err := t.Conn.Exec(ctx, `DELETE FROM memories WHERE expires_at IS NOT NULL AND expires_at < ?`, sqlq.Micros(before))
	return n, t.Wrap(err, "purge memory items")
}
