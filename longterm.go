package carryon

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// Limits of long-term memory items; the memory service enforces them.
const (
	// MaxLongTermKeyLength bounds a memory key.
	MaxLongTermKeyLength = 200
	// MaxLongTermNamespaceLength bounds a memory namespace.
	MaxLongTermNamespaceLength = 200
	// MaxLongTermValueBytes bounds the JSON value of a memory item.
	MaxLongTermValueBytes = 64 << 10
	// MaxLongTermTextBytes bounds the searchable text of a memory item.
	MaxLongTermTextBytes = 8 << 10
	// DefaultLongTermListLimit is the page size of a memory listing when none is given.
	DefaultLongTermListLimit = DefaultPageSize
	// DefaultLongTermSearchLimit is how many results a search returns when no limit is given.
	DefaultLongTermSearchLimit = 10
	// MaxLongTermSearchLimit bounds the results of one page of a search.
	MaxLongTermSearchLimit = 100
	// MaxLongTermSearchDepth bounds how far the pages of one search reach: its best results only.
	MaxLongTermSearchDepth = 1000
)

// LongTermItem is one entry of a user's long-term memory: a JSON value under (namespace, key), with
// text that search matches against. Memory belongs to one user and is never read for another.
type LongTermItem struct {
	// OwnerID is the user the item belongs to.
	OwnerID string `json:"owner_id,omitempty"`
	// Namespace is a dot-separated path of segments [a-z0-9_-]+, such as prefs or projects.alpha.
	Namespace string `json:"namespace"`
	// Key names the item inside its namespace.
	Key string `json:"key"`
	// Value is any JSON value.
	Value json.RawMessage `json:"value"`
	// Text is what search matches; when empty, the value's text is searched.
	Text string `json:"text,omitempty"`
	// Version is 1 when the item is first put and one more at every replace; a put or delete
	// with expected_version (or If-Match) names it.
	Version int64 `json:"version"`
	// Score is the relevance of a search result (higher is better); set by search only. In
	// keyword and hybrid mode it is relative to the best result (1); in semantic mode it is the
	// cosine similarity of the item's vector to the query's.
	Score float64 `json:"score,omitempty"`
	// Scores are the parts of a hybrid search's Score: each ranking the item was found by.
	Scores    *LongTermScores `json:"scores,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	// ExpiresAt is when the item stops being returned (nil: never).
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// Expired reports whether the item has expired at now.
func (m *LongTermItem) Expired(now time.Time) bool {
	return m.ExpiresAt != nil && !m.ExpiresAt.After(now)
}

// LongTermScores are what each ranking of a search made of an item: Keyword its full-text score
// relative to the best keyword match, Semantic the cosine similarity of its vector to the query's;
// nil when that ranking did not find it.
type LongTermScores struct {
	Keyword  *float64 `json:"keyword,omitempty"`
	Semantic *float64 `json:"semantic,omitempty"`
}

// SearchMode says how a search of long-term memory ranks.
type SearchMode string

// Search modes.
const (
	// SearchHybrid fuses the keyword and the semantic ranking (reciprocal rank fusion); the
	// default, and keyword alone on a server without embeddings.
	SearchHybrid SearchMode = "hybrid"
	// SearchSemantic ranks by the similarity of vectors only; it needs embeddings.
	SearchSemantic SearchMode = "semantic"
	// SearchKeyword ranks by shared words only (full-text search).
	SearchKeyword SearchMode = "keyword"
)

// LongTermAdd is the input of LongTermService.Add: a fact whose key the server chooses, or the
// key of a near duplicate of it that the write consolidates into.
type LongTermAdd struct {
	// Text is the fact; required.
	Text string `json:"text"`
	// Value is any JSON value (default: the text as a JSON string).
	Value json.RawMessage `json:"value,omitempty"`
	// TTLSeconds, when positive, makes the item expire that long after this write.
	TTLSeconds int64 `json:"ttl_seconds,omitempty"`
	// RetryOptions: a retry with the same request id answers the first answer (a consolidated
	// write is not applied twice).
	RetryOptions
}

// LongTermAdded is the answer of LongTermService.Add: the item as stored, and whether the fact
// was consolidated into an item there was.
type LongTermAdded struct {
	LongTermItem
	// ConsolidatedInto is the key of the existing item the fact was a near duplicate of, which
	// the write updated instead of adding one ("" when the item is new).
	ConsolidatedInto string `json:"consolidated_into,omitempty"`
	// Similarity is how near the fact was to that item (1 for the same text).
	Similarity float64 `json:"similarity,omitempty"`
	// Supersedes is the value the write replaced, kept as an earlier version of the item (nil
	// when nothing changed or the item is new).
	Supersedes *LongTermVersion `json:"supersedes,omitempty"`
}

// LongTermVersion is an earlier value of an item, kept when a consolidating write replaced it.
type LongTermVersion struct {
	Version      int64           `json:"version"`
	Value        json.RawMessage `json:"value"`
	Text         string          `json:"text,omitempty"`
	SupersededAt time.Time       `json:"superseded_at"`
}

// LongTermVersions are the kept earlier values of an item, newest first.
type LongTermVersions struct {
	Items []*LongTermVersion `json:"items"`
}

// Extraction is what one extraction of a session learned: the facts its turns after FromSeq up
// to ToSeq stated, as the consolidating write stored them (each new, or consolidated into an item
// there was), in Namespace of the owner's long-term memory.
type Extraction struct {
	SessionID string           `json:"session_id"`
	FromSeq   int64            `json:"from_seq"`
	ToSeq     int64            `json:"to_seq"`
	Version   int64            `json:"version"`
	Namespace string           `json:"namespace"`
	Facts     []*LongTermAdded `json:"facts"`
}

// LongTermPut is the input of LongTermService.Put.
type LongTermPut struct {
	// Value is any JSON value; required.
	Value json.RawMessage `json:"value"`
	// Text is what search matches; optional (the value's text is searched without it).
	Text string `json:"text,omitempty"`
	// TTLSeconds, when positive, makes the item expire that long after this write.
	TTLSeconds int64 `json:"ttl_seconds,omitempty"`
	// WriteOptions: ExpectedVersion refuses the put with EVERSION unless the item is at that
	// version (0: unless there is no item yet), for a safe read-modify-write.
	WriteOptions
}

// LongTermFilter pages through the caller's memory ordered by (namespace, key).
type LongTermFilter struct {
	// Namespace limits the listing to a namespace and the namespaces under it ("" for all).
	Namespace string `json:"namespace,omitempty"`
	Limit     int    `json:"limit,omitempty"`
	// Cursor is the NextCursor of the previous page.
	Cursor string `json:"cursor,omitempty"`
}

// LongTermPage is one page of memory items.
type LongTermPage struct {
	Items      []*LongTermItem `json:"items"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

// LongTermSearch is the input of LongTermService.Search.
type LongTermSearch struct {
	// Query is free text; its words are matched, each on its own. A query without words (empty or
	// only punctuation) returns the most recently updated items instead, with no score.
	Query string `json:"query"`
	// Namespace limits the search to a namespace and the namespaces under it ("" for all).
	Namespace string `json:"namespace,omitempty"`
	// Limit bounds the results of a page (default DefaultLongTermSearchLimit, at most
	// MaxLongTermSearchLimit).
	Limit int `json:"limit,omitempty"`
	// Cursor is the NextCursor of the previous page of the same search.
	Cursor string `json:"cursor,omitempty"`
	// Mode is how the search ranks (default hybrid).
	Mode SearchMode `json:"mode,omitempty"`
	// MinScore drops results whose Score is below it (0: none dropped).
	MinScore float64 `json:"min_score,omitempty"`
	// Filter keeps only items whose value is a JSON object holding each of these top-level
	// fields with that exact JSON value.
	Filter map[string]json.RawMessage `json:"filter,omitempty"`
}

// LongTermResults are the results of a search, most relevant first.
type LongTermResults struct {
	Items []*LongTermItem `json:"items"`
	// Mode is how the results were ranked: the mode asked for, or keyword when a hybrid search
	// had no vectors to use (a server without embeddings, or its provider failing).
	Mode SearchMode `json:"mode"`
	// NextCursor continues the search with its next results; empty on the last page (or at
	// MaxLongTermSearchDepth results).
	NextCursor string `json:"next_cursor,omitempty"`
}

// LongTermService is the caller's long-term memory. The caller is the user in the context; every
// method answers EUNAUTHORIZED without one and only ever reads or writes that user's items.
type LongTermService interface {
	// Put stores value (and text) under (namespace, key), replacing what was there. A repeat with
	// the same request id answers the first answer. EINVALID, EUNAUTHORIZED, EVERSION, EKEYREUSED.
	Put(ctx context.Context, namespace, key string, in LongTermPut) (*LongTermItem, error)
	// Get returns an item. ENOTFOUND (also when expired), EINVALID, EUNAUTHORIZED.
	Get(ctx context.Context, namespace, key string) (*LongTermItem, error)
	// Delete removes an item (with opt.ExpectedVersion, only at that version). A repeat with the
	// same request id succeeds again and changes nothing. ENOTFOUND, EINVALID, EUNAUTHORIZED,
	// EVERSION, EKEYREUSED.
	Delete(ctx context.Context, namespace, key string, opt WriteOptions) error
	// List pages through items by (namespace, key). EINVALID, EUNAUTHORIZED.
	List(ctx context.Context, f LongTermFilter) (*LongTermPage, error)
	// Search returns the items most relevant to the query, best first, a page at a time.
	// EINVALID, EUNAUTHORIZED.
	Search(ctx context.Context, in LongTermSearch) (*LongTermResults, error)
	// Add stores a fact under a key the server chooses, or, when the namespace holds a near
	// duplicate of it, updates that item instead (consolidation); concurrent adds of near
	// duplicates end as one item. EINVALID, EUNAUTHORIZED, EKEYREUSED.
	Add(ctx context.Context, namespace string, in LongTermAdd) (*LongTermAdded, error)
	// Versions returns the earlier values of an item that consolidating writes replaced.
	// ENOTFOUND, EINVALID, EUNAUTHORIZED.
	Versions(ctx context.Context, namespace, key string) (*LongTermVersions, error)
}

// InNamespace reports whether namespace ns lies in the subtree of filter: it is filter itself or
// a namespace under it, compared segment by segment (filter "u1" holds "u1" and "u1.x", never
// "u10"). An empty filter holds every namespace.
func InNamespace(ns, filter string) bool {
	return filter == "" || ns == filter || strings.HasPrefix(ns, filter+".")
}
