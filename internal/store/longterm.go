package store

import (
	"context"
	"encoding/json"
	"math"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/carryon-hub/carryon"
)

// LongTermQuery selects a page of one owner's long-term memory ordered by (namespace, key).
type LongTermQuery struct {
	// Namespace limits the page to that namespace and the namespaces under it, segment by
	// segment ("u1" holds "u1" and "u1.x", never "u10"); "" means every namespace.
	Namespace string
	// AfterNamespace and AfterKey continue after the last item of the previous page (keyset
	// paging); both empty means the first page.
	AfterNamespace, AfterKey string
	// Now hides items that expired at or before it.
	Now   time.Time
	Limit int
}

// LongTermSearchQuery is a ranked search of one owner's long-term memory.
type LongTermSearchQuery struct {
	// Text is free text; SearchTerms says which words of it are matched. Each term is matched on
	// its own (any term matches) and items with more and rarer matches rank higher. A text with no
	// terms returns the most recently updated items instead, with Score 0.
	Text string
	// Namespace limits the search to a subtree, as in LongTermQuery.
	Namespace string
	// Now hides items that expired at or before it.
	Now   time.Time
	Limit int
}

// LongTerm stores users' long-term memory. The owner is a required argument of every method:
// there is no way to read or search memory without naming whose it is, and an empty owner is
// refused with EINVALID (see CheckOwner). The methods are named …LongTermItem so that they do not
// clash with the session working memory of the WorkingMemory aggregate.
type LongTerm interface {
	// PutLongTermItem inserts the item or replaces the owner's item with the same (namespace, key),
	// storing every field as given (the caller keeps CreatedAt of a replaced item).
	PutLongTermItem(ctx context.Context, owner string, it *carryon.LongTermItem) error
	// GetLongTermItem returns the owner's item. ENOTFOUND when missing or expired at now.
	GetLongTermItem(ctx context.Context, owner, namespace, key string, now time.Time) (*carryon.LongTermItem, error)
	// DeleteLongTermItem removes the owner's item, expired or not. ENOTFOUND when there is none.
	DeleteLongTermItem(ctx context.Context, owner, namespace, key string) error
	// ListLongTermItems returns a page of the owner's unexpired items by (namespace, key).
	ListLongTermItems(ctx context.Context, owner string, q LongTermQuery) ([]*carryon.LongTermItem, error)
	// SearchLongTermItems returns up to q.Limit of the owner's unexpired items matching q.Text,
	// best first (Score descending, then UpdatedAt descending, then namespace and key).
	SearchLongTermItems(ctx context.Context, owner string, q LongTermSearchQuery) ([]*carryon.LongTermItem, error)
	// PurgeExpiredLongTermItems removes, across owners, every item that expired before t and
	// returns how many. It is for the system sweeper only.
	PurgeExpiredLongTermItems(ctx context.Context, before time.Time) (int64, error)
	// HasExpiredLongTermItems says whether an item of any owner expired before t, so that the
	// sweeper writes only when there is something to remove. It works in a Read transaction.
	HasExpiredLongTermItems(ctx context.Context, before time.Time) (bool, error)
}

// CheckOwner refuses an empty owner: drivers call it first in every LongTerm method.
func CheckOwner(owner string) error {
	if owner == "" {
		return carryon.Errorf(carryon.EINVALID, "store: long-term memory needs an owner")
	}
	return nil
}

// MaxSearchTerms bounds the terms of one search.
const MaxSearchTerms = 32

// stopWords are common English words that say nothing about what a text is about; a search
// skips them, so that a whole sentence can serve as a query.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by can could did do does for from had has have
		how i if in into is it its me my no not of on or our should so than that the their them then there
		these they this to was we were what when where which who why will with would you your`) {
		stopWords[w] = true
	}
}

// SearchTerms returns the words a search matches: runs of letters and digits, lower-cased, each
// at most 64 bytes, without repeats and common English stop words ("the", "a", "which", …), at
// most MaxSearchTerms of them. Everything else (spaces,
// punctuation, quotes, *, %, operators of any query syntax) only separates words, so a term can
// never carry syntax into a driver's full-text query.
func SearchTerms(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(w) > 64 || seen[w] || stopWords[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == MaxSearchTerms {
			break
		}
	}
	return out
}

// LongTermDocument is the text a driver indexes for an item: its namespace and key as words,
// then its text, or, without text, the strings and numbers of its value. Drivers index exactly
// this, so they match the same items.
func LongTermDocument(it *carryon.LongTermItem) string {
	var b strings.Builder
	b.WriteString(strings.Join(SearchTerms(it.Namespace+" "+it.Key), " "))
	b.WriteString("\n")
	if it.Text != "" {
		b.WriteString(it.Text)
		return b.String()
	}
	var v any
	if json.Unmarshal(it.Value, &v) == nil {
		valueText(&b, v)
	}
	return b.String()
}

func valueText(b *strings.Builder, v any) {
	switch t := v.(type) {
	case string:
		b.WriteString(t + " ")
	case float64, bool:
		j, _ := json.Marshal(t)
		b.Write(j)
		b.WriteString(" ")
	case []any:
		for _, x := range t {
			valueText(b, x)
		}
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			b.WriteString(k + " ")
			valueText(b, t[k])
		}
	}
}

// EscapeLike escapes the LIKE metacharacters %, _ and the escape character \ in s, for a
// pattern written with ESCAPE '\'.
func EscapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// RelativeScores rescales the scores of a search's items, best first, so that the best is 1 and
// the others are their share of it (rounded to three places, at least 0.001): a driver's raw
// scores mean nothing across drivers or queries. Items found without a query keep Score 0.
func RelativeScores(items []*carryon.LongTermItem) {
	if len(items) == 0 || items[0].Score <= 0 {
		return
	}
	best := items[0].Score
	for _, it := range items {
		it.Score = math.Max(math.Round(it.Score/best*1000)/1000, 0.001)
	}
}
