package sqlq

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// Long-term memory. Reads and the search share one shape; how a search matches and ranks is the
// database's own (Dialect.LongTermSearch), and so is how an item's search document is kept (each
// driver's PutLongTermItem, DeleteLongTermItem and PurgeExpiredLongTermItems).

// LongTermCols are the columns every read of long-term memory selects, of the table aliased m.
const LongTermCols = `m.owner_id, m.namespace, m.key, m.value, m.text, m.created_at, m.updated_at, m.expires_at, m.version`

// LongTermSearch is the part of a long-term memory search that is the database's own: how the
// rows of memories (aliased m) are joined to the full-text index, which of them match, and their
// score, higher for better matches.
type LongTermSearch struct {
	// From is the FROM clause without FROM, e.g. "memories m".
	From string
	// Score is an SQL expression of the float score, with ScoreArgs for its placeholders.
	Score     string
	ScoreArgs []any
	// Match is the SQL condition that keeps the matching rows, with MatchArgs for its placeholders.
	Match     string
	MatchArgs []any
}

// WritableBy refuses a write of long-term memory without an owner (store.CheckOwner) or inside a
// Read transaction.
func (t *Tx) WritableBy(owner string) error {
	if err := store.CheckOwner(owner); err != nil {
		return err
	}
	return t.Writable()
}

// QuoteEach returns each term between quote characters, a quote inside doubled: the quoting of
// SQL strings (') and of FTS5 strings (").
func QuoteEach(terms []string, quote string) []string {
	out := make([]string, len(terms))
	for i, term := range terms {
		out[i] = quote + strings.ReplaceAll(term, quote, quote+quote) + quote
	}
	return out
}

// scanLongTermItem reads a row of LongTermCols and, when score is not nil, a score after them.
func scanLongTermItem(r Row, score *float64) (*carryon.LongTermItem, error) {
	var it carryon.LongTermItem
	var value string
	var created, updated int64
	var expires *int64
	dest := []any{&it.OwnerID, &it.Namespace, &it.Key, &value, &it.Text, &created, &updated, &expires, &it.Version}
	if score != nil {
		dest = append(dest, score)
	}
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	it.Value = []byte(value)
	it.CreatedAt, it.UpdatedAt, it.ExpiresAt = FromMicros(created), FromMicros(updated), TimePtr(expires)
	if score != nil {
		it.Score = *score
	}
	return &it, nil
}

// longTermFilter returns the conditions every read of long-term memory has, on memories aliased m:
// the owner, unexpired at now, and the namespace subtree (segment by segment) when ns is not empty.
func longTermFilter(owner, ns string, now time.Time) (string, []any) {
	w := `m.owner_id = ? AND (m.expires_at IS NULL OR m.expires_at > ?)`
	args := []any{owner, Micros(now)}
	if ns != "" {
		w += ` AND (m.namespace = ? OR m.namespace LIKE ? ESCAPE '\')`
		args = append(args, ns, store.EscapeLike(ns)+".%")
	}
	return w, args
}

// queryLongTermItems reads the items a query selects; scored queries select a score after LongTermCols.
func (t *Tx) queryLongTermItems(ctx context.Context, op string, scored bool, query string, args ...any) ([]*carryon.LongTermItem, error) {
	out, err := scanAll(t, ctx, op, func(r Row) (*carryon.LongTermItem, error) {
		if !scored {
			return scanLongTermItem(r, nil)
		}
		var score float64
		return scanLongTermItem(r, &score)
	}, query, args...)
	if err == nil && out == nil {
		out = []*carryon.LongTermItem{}
	}
	return out, err
}

// GetLongTermItem returns the owner's item. ENOTFOUND when missing or expired at now.
func (t *Tx) GetLongTermItem(ctx context.Context, owner, namespace, key string, now time.Time) (*carryon.LongTermItem, error) {
	if err := store.CheckOwner(owner); err != nil {
		return nil, err
	}
	it, err := scanLongTermItem(t.Conn.QueryRow(ctx, `SELECT `+LongTermCols+` FROM memories m
		WHERE m.owner_id = ? AND m.namespace = ? AND m.key = ? AND (m.expires_at IS NULL OR m.expires_at > ?)`,
		owner, namespace, key, Micros(now)), nil)
	if errors.Is(err, ErrNoRows) {
		return nil, NotFound("memory item", namespace+"/"+key)
	}
	return it, t.Wrap(err, "get memory item")
}

// ListLongTermItems returns a page of the owner's unexpired items by (namespace, key); the next
// page starts after (q.AfterNamespace, q.AfterKey) by a row-value comparison, which both
// databases turn into a seek of the (owner_id, namespace, key) index.
func (t *Tx) ListLongTermItems(ctx context.Context, owner string, q store.LongTermQuery) ([]*carryon.LongTermItem, error) {
	if err := store.CheckOwner(owner); err != nil {
		return nil, err
	}
	w, args := longTermFilter(owner, q.Namespace, q.Now)
	if q.AfterNamespace != "" || q.AfterKey != "" {
		w += ` AND (m.namespace, m.key) > (?, ?)`
		args = append(args, q.AfterNamespace, q.AfterKey)
	}
	out, err := scanWithin(t, ctx, "list memory items", func(r Row) (*carryon.LongTermItem, error) { return scanLongTermItem(r, nil) },
		longTermSize, `SELECT `+LongTermCols+` FROM memories m WHERE `+w+` ORDER BY m.namespace, m.key`+limitArg, append(args, Limit(q.Limit))...)
	if errors.Is(err, store.ErrBudgetSpent) {
		err = nil // a read budget (store.WithReadBudget) stopped the page: the caller pages on
	}
	if err == nil && out == nil {
		out = []*carryon.LongTermItem{}
	}
	return out, err
}

// longTermSize is what an item counts against a read budget.
func longTermSize(it *carryon.LongTermItem) int64 {
	return int64(len(it.Value)+len(it.Namespace)+len(it.Key)) + 256
}

// SearchLongTermItems returns the owner's unexpired items matching q.Text, best first by the
// database's score (Dialect.LongTermSearch), then most recently updated; a text without terms
// returns the most recently updated items with Score 0.
func (t *Tx) SearchLongTermItems(ctx context.Context, owner string, q store.LongTermSearchQuery) ([]*carryon.LongTermItem, error) {
	if err := store.CheckOwner(owner); err != nil {
		return nil, err
	}
	w, args := longTermFilter(owner, q.Namespace, q.Now)
	terms := store.SearchTerms(q.Text)
	if len(terms) == 0 {
		return t.queryLongTermItems(ctx, "search memory items", false, `SELECT `+LongTermCols+` FROM memories m WHERE `+w+
			` ORDER BY m.updated_at DESC, m.namespace, m.key`+limitArg, append(args, Limit(q.Limit))...)
	}
	s := t.d.LongTermSearch(owner, terms)
	all := slices.Concat(s.ScoreArgs, s.MatchArgs, args, []any{Limit(q.Limit)})
	return t.queryLongTermItems(ctx, "search memory items", true, `SELECT `+LongTermCols+`, `+s.Score+` AS score
		FROM `+s.From+` WHERE `+s.Match+` AND `+w+`
		ORDER BY score DESC, m.updated_at DESC, m.namespace, m.key`+limitArg, all...)
}

// HasExpiredLongTermItems says whether an item of any owner expired before t.
func (t *Tx) HasExpiredLongTermItems(ctx context.Context, before time.Time) (bool, error) {
	return t.exists(ctx, "expired memory items", `SELECT 1 FROM memories WHERE expires_at IS NOT NULL AND expires_at < ? LIMIT 1`, Micros(before))
}
