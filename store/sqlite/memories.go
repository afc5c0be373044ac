package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/store"
)

// Long-term memory. Items live in memories and their search documents in the FTS5 table
// memories_fts (rowid = memories.id; columns doc, the document, and owner, the owner's token),
// which this file keeps in sync inside the same transaction. A search matches the FTS5 expression
// owner : "<owner token>" AND doc : ("t1" OR "t2" …) built from store.SearchTerms (every term
// quoted; terms hold only letters and digits, so no FTS5 syntax can get in): the index itself
// keeps only the owner's rows, so other users' matches are never read, ranked or joined. The
// matches are joined back to memories, which keeps the owner's unexpired rows in the namespace
// subtree (the owner again, as every query does), ranked by bm25() with the owner column weighted
// 0. bm25's term statistics are those of the whole table, so other users' items can shift the
// weights of terms (never which items match); the memory service reports scores relative to the
// best result only.

const memoryCols = `m.owner_id, m.namespace, m.key, m.value, m.text, m.created_at, m.updated_at, m.expires_at`

func scanMemory(r scanner, extra ...any) (*carryon.MemoryItem, error) {
	var it carryon.MemoryItem
	var value string
	var created, updated int64
	var expires sql.NullInt64
	dest := append([]any{&it.OwnerID, &it.Namespace, &it.Key, &value, &it.Text, &created, &updated, &expires}, extra...)
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	it.Value = []byte(value)
	it.CreatedAt, it.UpdatedAt, it.ExpiresAt = fromMicros(created), fromMicros(updated), timePtr(expires)
	return &it, nil
}

// PutMemoryItem inserts the item or replaces the owner's item with the same (namespace, key),
// and rewrites its search document.
func (t *tx) PutMemoryItem(ctx context.Context, owner string, it *carryon.MemoryItem) error {
	if err := store.CheckOwner(owner); err != nil {
		return err
	}
	if err := t.Writable(); err != nil {
		return err
	}
	var id int64
	err := t.tx.QueryRowContext(ctx, `INSERT INTO memories (owner_id, namespace, key, value, text, created_at, updated_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (owner_id, namespace, key) DO UPDATE SET value = excluded.value, text = excluded.text,
		created_at = excluded.created_at, updated_at = excluded.updated_at, expires_at = excluded.expires_at
		RETURNING id`,
		owner, it.Namespace, it.Key, string(it.Value), it.Text, micros(it.CreatedAt), micros(it.UpdatedAt),
		nullMicros(it.ExpiresAt)).Scan(&id)
	if err != nil {
		return wrap(err, "put memory item")
	}
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM memories_fts WHERE rowid = ?`, id); err != nil {
		return wrap(err, "index memory item")
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO memories_fts (rowid, doc, owner) VALUES (?, ?, ?)`, id,
		store.MemoryDocument(it), ownerToken(owner))
	return wrap(err, "index memory item")
}

// ownerToken is how the full-text index names an owner: the upper-case hex of the id's bytes,
// one token for the unicode61 tokenizer whatever the id holds (SQL: hex(owner_id)).
func ownerToken(owner string) string { return fmt.Sprintf("%X", owner) }

// searchMatch is the FTS5 expression that matches the owner's documents holding any of terms.
func searchMatch(owner string, terms []string) string {
	quoted := make([]string, len(terms))
	for i, term := range terms {
		quoted[i] = `"` + strings.ReplaceAll(term, `"`, `""`) + `"`
	}
	return `owner : "` + ownerToken(owner) + `" AND doc : (` + strings.Join(quoted, " OR ") + `)`
}

// GetMemoryItem returns the owner's item. ENOTFOUND when missing or expired at now.
func (t *tx) GetMemoryItem(ctx context.Context, owner, namespace, key string, now time.Time) (*carryon.MemoryItem, error) {
	if err := store.CheckOwner(owner); err != nil {
		return nil, err
	}
	it, err := scanMemory(t.tx.QueryRowContext(ctx, `SELECT `+memoryCols+` FROM memories m
		WHERE m.owner_id = ? AND m.namespace = ? AND m.key = ? AND (m.expires_at IS NULL OR m.expires_at > ?)`,
		owner, namespace, key, micros(now)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("memory item", namespace+"/"+key)
	}
	return it, wrap(err, "get memory item")
}

// DeleteMemoryItem removes the owner's item and its search document. ENOTFOUND when there is none.
func (t *tx) DeleteMemoryItem(ctx context.Context, owner, namespace, key string) error {
	if err := store.CheckOwner(owner); err != nil {
		return err
	}
	if err := t.Writable(); err != nil {
		return err
	}
	var id int64
	err := t.tx.QueryRowContext(ctx, `DELETE FROM memories WHERE owner_id = ? AND namespace = ? AND key = ? RETURNING id`,
		owner, namespace, key).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound("memory item", namespace+"/"+key)
	} else if err != nil {
		return wrap(err, "delete memory item")
	}
	_, err = t.tx.ExecContext(ctx, `DELETE FROM memories_fts WHERE rowid = ?`, id)
	return wrap(err, "delete memory item")
}

// subtree returns the SQL condition and arguments that keep namespace ns and the namespaces
// under it (segment by segment), or nothing for "".
func subtree(ns string) (string, []any) {
	if ns == "" {
		return "", nil
	}
	return ` AND (m.namespace = ? OR m.namespace LIKE ? ESCAPE '\')`, []any{ns, store.EscapeLike(ns) + ".%"}
}

// ListMemoryItems returns a page of the owner's unexpired items by (namespace, key).
func (t *tx) ListMemoryItems(ctx context.Context, owner string, q store.MemoryQuery) ([]*carryon.MemoryItem, error) {
	if err := store.CheckOwner(owner); err != nil {
		return nil, err
	}
	var b strings.Builder
	args := []any{owner, micros(q.Now)}
	b.WriteString(`SELECT ` + memoryCols + ` FROM memories m WHERE m.owner_id = ? AND (m.expires_at IS NULL OR m.expires_at > ?)`)
	cond, cargs := subtree(q.Namespace)
	b.WriteString(cond)
	args = append(args, cargs...)
	if q.AfterNamespace != "" || q.AfterKey != "" {
		b.WriteString(` AND (m.namespace > ? OR (m.namespace = ? AND m.key > ?))`)
		args = append(args, q.AfterNamespace, q.AfterNamespace, q.AfterKey)
	}
	b.WriteString(` ORDER BY m.namespace, m.key LIMIT ?`)
	args = append(args, limitArg(q.Limit))
	return t.queryMemories(ctx, "list memory items", false, b.String(), args...)
}

// SearchMemoryItems returns the owner's unexpired items matching q.Text, best first by bm25();
// a text without terms returns the most recently updated items with Score 0.
func (t *tx) SearchMemoryItems(ctx context.Context, owner string, q store.MemorySearchQuery) ([]*carryon.MemoryItem, error) {
	if err := store.CheckOwner(owner); err != nil {
		return nil, err
	}
	cond, cargs := subtree(q.Namespace)
	terms := store.SearchTerms(q.Text)
	if len(terms) == 0 {
		args := append([]any{owner, micros(q.Now)}, cargs...)
		return t.queryMemories(ctx, "search memory items", false, `SELECT `+memoryCols+` FROM memories m
			WHERE m.owner_id = ? AND (m.expires_at IS NULL OR m.expires_at > ?)`+cond+`
			ORDER BY m.updated_at DESC, m.namespace, m.key LIMIT ?`, append(args, limitArg(q.Limit))...)
	}
	args := append([]any{searchMatch(owner, terms), owner, micros(q.Now)}, cargs...)
	return t.queryMemories(ctx, "search memory items", true, `SELECT `+memoryCols+`, -bm25(memories_fts, 1.0, 0.0) AS score
		FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
		WHERE memories_fts MATCH ? AND m.owner_id = ? AND (m.expires_at IS NULL OR m.expires_at > ?)`+cond+`
		ORDER BY score DESC, m.updated_at DESC, m.namespace, m.key LIMIT ?`, append(args, limitArg(q.Limit))...)
}

func (t *tx) queryMemories(ctx context.Context, op string, scored bool, query string, args ...any) ([]*carryon.MemoryItem, error) {
	rows, err := t.tx.QueryContext(ctx, query, args...)
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

// PurgeExpiredMemoryItems removes every item of any owner that expired before t, with its search
// document, and returns how many.
func (t *tx) PurgeExpiredMemoryItems(ctx context.Context, before time.Time) (int64, error) {
	if err := t.Writable(); err != nil {
		return 0, err
	}
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM memories_fts WHERE rowid IN
		(SELECT id FROM memories WHERE expires_at IS NOT NULL AND expires_at < ?)`, micros(before)); err != nil {
		return 0, wrap(err, "purge memory items")
	}
	res, err := t.tx.ExecContext(ctx, `DELETE FROM memories WHERE expires_at IS NOT NULL AND expires_at < ?`, micros(before))
	if err != nil {
		return 0, wrap(err, "purge memory items")
	}
	n, err := res.RowsAffected()
	return n, wrap(err, "purge memory items")
}
