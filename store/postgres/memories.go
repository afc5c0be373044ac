package postgres

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/store"
	"github.com/jackc/pgx/v5"
)

// Long-term memory. A search turns store.SearchTerms into the tsquery 't1' | 't2' … (every term
// quoted; terms hold only letters and digits, so no tsquery syntax can get in), matches it against
// the generated tsvector column and keeps only the owner's unexpired rows in the namespace
// subtree, ranked by ts_rank, which reads nothing but the row itself.

const memoryCols = `owner_id, namespace, key, value, text, created_at, updated_at, expires_at`

func scanMemory(r scanner, extra ...any) (*carryon.MemoryItem, error) {
	var it carryon.MemoryItem
	var value string
	var created, updated int64
	var expires *int64
	dest := append([]any{&it.OwnerID, &it.Namespace, &it.Key, &value, &it.Text, &created, &updated, &expires}, extra...)
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	it.Value = []byte(value)
	it.CreatedAt, it.UpdatedAt, it.ExpiresAt = fromMicros(created), fromMicros(updated), timePtr(expires)
	return &it, nil
}

// PutMemoryItem inserts the item or replaces the owner's item with the same (namespace, key)
// (INSERT … ON CONFLICT DO UPDATE, so a concurrent insert of the same key replaces instead of failing).
func (t *tx) PutMemoryItem(ctx context.Context, owner string, it *carryon.MemoryItem) error {
	if err := store.CheckOwner(owner); err != nil {
		return err
	}
	if err := t.Writable(); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO memories (owner_id, namespace, key, value, text, doc, created_at, updated_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (owner_id, namespace, key) DO UPDATE SET value = EXCLUDED.value, text = EXCLUDED.text,
		doc = EXCLUDED.doc, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at, expires_at = EXCLUDED.expires_at`,
		owner, it.Namespace, it.Key, string(it.Value), it.Text, store.MemoryDocument(it), micros(it.CreatedAt),
		micros(it.UpdatedAt), nullMicros(it.ExpiresAt))
	return wrap(err, "put memory item")
}

// GetMemoryItem returns the owner's item. ENOTFOUND when missing or expired at now.
func (t *tx) GetMemoryItem(ctx context.Context, owner, namespace, key string, now time.Time) (*carryon.MemoryItem, error) {
	if err := store.CheckOwner(owner); err != nil {
		return nil, err
	}
	it, err := scanMemory(t.tx.QueryRow(ctx, `SELECT `+memoryCols+` FROM memories
		WHERE owner_id = $1 AND namespace = $2 AND key = $3 AND (expires_at IS NULL OR expires_at > $4)`,
		owner, namespace, key, micros(now)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("memory item", namespace+"/"+key)
	}
	return it, wrap(err, "get memory item")
}

// DeleteMemoryItem removes the owner's item. ENOTFOUND when there is none.
func (t *tx) DeleteMemoryItem(ctx context.Context, owner, namespace, key string) error {
	if err := store.CheckOwner(owner); err != nil {
		return err
	}
	if err := t.Writable(); err != nil {
		return err
	}
	tag, err := t.tx.Exec(ctx, `DELETE FROM memories WHERE owner_id = $1 AND namespace = $2 AND key = $3`, owner, namespace, key)
	if err != nil {
		return wrap(err, "delete memory item")
	}
	if tag.RowsAffected() == 0 {
		return notFound("memory item", namespace+"/"+key)
	}
	return nil
}

// where starts the conditions every memory read has: the owner, unexpired at now, and the
// namespace subtree (segment by segment) when ns is not empty.
func memoryWhere(a *args, owner, ns string, now time.Time) string {
	w := `owner_id = ` + a.add(owner) + ` AND (expires_at IS NULL OR expires_at > ` + a.add(micros(now)) + `)`
	if ns != "" {
		w += ` AND (namespace = ` + a.add(ns) + ` OR namespace LIKE ` + a.add(store.EscapeLike(ns)+".%") + ` ESCAPE '\')`
	}
	return w
}

// ListMemoryItems returns a page of the owner's unexpired items by (namespace, key).
func (t *tx) ListMemoryItems(ctx context.Context, owner string, q store.MemoryQuery) ([]*carryon.MemoryItem, error) {
	if err := store.CheckOwner(owner); err != nil {
		return nil, err
	}
	var a args
	w := memoryWhere(&a, owner, q.Namespace, q.Now)
	if q.AfterNamespace != "" || q.AfterKey != "" {
		w += ` AND (namespace, key) > (` + a.add(q.AfterNamespace) + `, ` + a.add(q.AfterKey) + `)`
	}
	return t.queryMemories(ctx, "list memory items", false, `SELECT `+memoryCols+` FROM memories WHERE `+w+
		` ORDER BY namespace, key LIMIT `+a.add(limitArg(q.Limit)), a...)
}

// SearchMemoryItems returns the owner's unexpired items matching q.Text, best first by ts_rank;
// a text without terms returns the most recently updated items with Score 0.
func (t *tx) SearchMemoryItems(ctx context.Context, owner string, q store.MemorySearchQuery) ([]*carryon.MemoryItem, error) {
	if err := store.CheckOwner(owner); err != nil {
		return nil, err
	}
	var a args
	w := memoryWhere(&a, owner, q.Namespace, q.Now)
	terms := store.SearchTerms(q.Text)
	if len(terms) == 0 {
		return t.queryMemories(ctx, "search memory items", false, `SELECT `+memoryCols+` FROM memories WHERE `+w+
			` ORDER BY updated_at DESC, namespace, key LIMIT `+a.add(limitArg(q.Limit)), a...)
	}
	quoted := make([]string, len(terms))
	for i, term := range terms {
		quoted[i] = `'` + strings.ReplaceAll(term, `'`, `''`) + `'`
	}
	tsq := `to_tsquery('simple', ` + a.add(strings.Join(quoted, " | ")) + `)`
	return t.queryMemories(ctx, "search memory items", true, `SELECT `+memoryCols+`, ts_rank(tsv, `+tsq+`)::float8 AS score
		FROM memories WHERE `+w+` AND tsv @@ `+tsq+`
		ORDER BY score DESC, updated_at DESC, namespace, key LIMIT `+a.add(limitArg(q.Limit)), a...)
}

func (t *tx) queryMemories(ctx context.Context, op string, scored bool, query string, args ...any) ([]*carryon.MemoryItem, error) {
	rows, err := t.tx.Query(ctx, query, args...)
	if err != nil {
		return nil, wrap(err, op)
	}
	defer rows.Close()
	out := []*carryon.MemoryItem{}
	for rows.Next() {
		var score float64
		var extra []any
		if scored {
			extra = []any{&score}
		}
		it, err := scanMemory(rows, extra...)
		if err != nil {
			return nil, wrap(err, op)
		}
		it.Score = score
		out = append(out, it)
	}
	return out, wrap(rows.Err(), op)
}

// PurgeExpiredMemoryItems removes every item of any owner that expired before t and returns how many.
func (t *tx) PurgeExpiredMemoryItems(ctx context.Context, before time.Time) (int64, error) {
	if err := t.Writable(); err != nil {
		return 0, err
	}
	tag, err := t.tx.Exec(ctx, `DELETE FROM memories WHERE expires_at IS NOT NULL AND expires_at < $1`, micros(before))
	if err != nil {
		return 0, wrap(err, "purge memory items")
	}
	return tag.RowsAffected(), nil
}
