package sqlite

import (
	"context"
	"errors"
	"strings"

	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/sqlq"
)

// Session search on SQLite: the FTS5 table session_search (migration 0025), one document per
// message a session shows under rowid = session_key * 2^32 + seq (session keys are serial here,
// so they stay far below 2^31, and a session's documents are one rowid range). A search
// matches the FTS5 expression "t1" AND "t2" … AND "tn"* (every term quoted; terms hold only
// letters and digits, so no FTS5 syntax can get in) and keeps the sessions the matching rowids
// name; the shared query keeps the owner's among them.
//
// The probe (probeSearch) asks FTS5 about one session's rowid range. FTS5 expands a prefix over
// the whole index every time it runs one (55 ms a probe with a million documents), so the probe
// matches the last term as the OR of the whole words it starts in the index (prefixTerms), read
// once a search.
var sessionSearch = sqlq.SessionSearch{
	Insert:        `INSERT INTO session_search (rowid, doc) VALUES (?1 * 4294967296 + ?2, ?3)`,
	Delete:        `DELETE FROM session_search WHERE rowid = ?1 * 4294967296 + ?2`,
	DeleteSession: `DELETE FROM session_search WHERE rowid >= ?1 * 4294967296 AND rowid < (?1 + 1) * 4294967296`,
	ForgetBatch: `DELETE FROM session_search WHERE rowid IN (SELECT rowid FROM session_search
		WHERE rowid >= (SELECT session_key FROM sessions WHERE id = ?1) * 4294967296
		AND rowid < ((SELECT session_key FROM sessions WHERE id = ?1) + 1) * 4294967296 LIMIT ?2)`,
	CopyFork: `INSERT INTO session_search (rowid, doc)
		SELECT ?1 * 4294967296 + (rowid - ?2 * 4294967296), doc FROM session_search
		WHERE rowid > ?2 * 4294967296 AND rowid <= ?2 * 4294967296 + ?3`,
	StorageFrom: `sessions s JOIN session_search x
		ON x.rowid >= s.session_key * 4294967296 AND x.rowid < (s.session_key + 1) * 4294967296`,
	StorageBytes: `octet_length(x.doc)`,
	Match: func(terms []string) (string, []any) {
		return `SELECT rowid >> 32 FROM session_search WHERE session_search MATCH ?`, []any{searchExpression(terms)}
	},
	Probe: probeSearch,
	MetadataEquals: func(key, value string) (string, []any) {
		path := `$."` + key + `"`
		return `json_type(metadata, ?) = 'text' AND json_extract(metadata, ?) = ?`, []any{path, path, value}
	},
}

// searchExpression is the FTS5 expression holding every term, the last as a prefix.
func searchExpression(terms []string) string {
	q := sqlq.QuoteEach(terms, `"`)
	q[len(q)-1] += "*"
	return strings.Join(q, " AND ")
}

// probeAbove is how many documents must hold a search's terms as whole words for it to probe:
// fewer are collected in about the time a count up to probeAbove takes, where a probe of a
// session that holds none costs as much as collecting a hundred.
const probeAbove = 4000

// fewPrefixTerms is how many words a last term that is no common word of its own may start for
// the search to count them (a vocabulary seek each) and probe.
const fewPrefixTerms = 4

// maxPrefixTerms is how many words the last term of a search may start for the probe to match
// them one by one; a shorter prefix is searched by collecting.
const maxPrefixTerms = 64

// probeSearch is SessionSearch.Probe: an EXISTS over the session's rowid range with the terms,
// the last as the words it starts in the index. It probes when at least probeAbove documents
// hold every term as a whole word, counted up to there (the count stops early, as a collect
// cannot; a count with the prefix would expand it over the whole index, and expanding it first
// costs a seek a word), or, failing that, the last term as one of the at most fewPrefixTerms
// words it starts: a common word typed in full or in part probes, while rare words and short
// prefixes of many words collect. Where the prefix starts more than maxPrefixTerms words, or
// holds a letter the tokenizer folds (not ASCII), there is no cheap probe; forced, the probe
// matches the prefix as FTS5 does.
func probeSearch(ctx context.Context, c sqlq.Conn, q store.SessionQuery) (string, []any, error) {
	terms, force, above := q.Terms, q.Plan == store.SearchPlanProbe, probeAbove
	if q.ProbeAbove > 0 {
		above = q.ProbeAbove
	}
	var words []string
	ok := false
	if !force {
		n, err := countMatches(ctx, c, sqlq.QuoteEach(terms, `"`), above)
		if err != nil {
			return "", nil, err
		}
		if n < above {
			// The last term may be the start of common words (a search box's word being typed):
			// a few of them are counted too.
			words, ok, err = prefixTerms(ctx, c, terms[len(terms)-1], fewPrefixTerms)
			if err != nil || !ok || len(words) == 0 || len(words) == 1 && words[0] == terms[len(terms)-1] {
				return "", nil, err
			}
			if n, err = countMatches(ctx, c, append(sqlq.QuoteEach(terms[:len(terms)-1], `"`), anyOf(words)), above); err != nil || n < above {
				return "", nil, err
			}
		}
	}
	if !ok {
		var err error
		if words, ok, err = prefixTerms(ctx, c, terms[len(terms)-1], maxPrefixTerms); err != nil {
			return "", nil, err
		}
	}
	var expr string
	switch {
	case ok && len(words) == 0:
		return `0 = 1`, nil, nil
	case ok:
		expr = strings.Join(append(sqlq.QuoteEach(terms[:len(terms)-1], `"`), anyOf(words)), " AND ")
	case force:
		expr = searchExpression(terms)
	default:
		return "", nil, nil
	}
	return `EXISTS (SELECT 1 FROM session_search WHERE session_search MATCH ?
		AND rowid >= w.session_key * 4294967296 AND rowid < (w.session_key + 1) * 4294967296)`, []any{expr}, nil
}

// prefixTerms returns the words of the index that start with prefix, in order, walking the
// temporary fts5vocab table session_search_terms (of type instance: a step reads one instance of
// the next word, where type row would count every document of it); ok is false when prefix is
// not ASCII or starts more than most words.
func prefixTerms(ctx context.Context, c sqlq.Conn, prefix string, most int) ([]string, bool, error) {
	for _, r := range prefix {
		if r >= 0x80 {
			return nil, false, nil
		}
	}
	if _, err := c.Exec(ctx, `CREATE VIRTUAL TABLE IF NOT EXISTS temp.session_search_terms
		USING fts5vocab(main, session_search, instance)`); err != nil {
		return nil, false, err
	}
	var words []string
	from := prefix
	for len(words) <= most {
		var word string
		err := c.QueryRow(ctx, `SELECT term FROM temp.session_search_terms WHERE term >= ? LIMIT 1`, from).Scan(&word)
		if errors.Is(err, sqlq.ErrNoRows) || err == nil && !strings.HasPrefix(word, prefix) {
			return words, true, nil
		} else if err != nil {
			return nil, false, err
		}
		words = append(words, word)
		from = word + "\x01"
	}
	return nil, false, nil
}

// countMatches counts the documents that match every one of exprs, up to most.
func countMatches(ctx context.Context, c sqlq.Conn, exprs []string, most int) (int, error) {
	var n int
	err := c.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM session_search WHERE session_search MATCH ? LIMIT ?)`,
		strings.Join(exprs, " AND "), most).Scan(&n)
	return n, err
}

// anyOf is the FTS5 expression matching any one of words.
func anyOf(words []string) string {
	return "(" + strings.Join(sqlq.QuoteEach(words, `"`), " OR ") + ")"
}
