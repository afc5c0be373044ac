package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/sqlq"
)

// Session search on PostgreSQL: the table session_search (migration 0025), one tsvector per
// message a session shows under (session_key, seq), with a GIN index; its rows go with their
// session by a foreign key with ON DELETE CASCADE. A search matches the tsquery 't1' & 't2' & …
// & 'tn':* (every term quoted; terms hold only letters and digits, so no tsquery syntax can get
// in) and keeps the sessions the matching rows name; the shared query keeps the owner's among
// them. The probe reads one session's rows by the primary key (session_key, seq) and tests each
// with ts_match_vq, the function behind @@, which the planner cannot answer from the GIN index:
// a probe that used it would build the bitmap of every match in every session it asks about.
var sessionSearch = sqlq.SessionSearch{
	Insert: `INSERT INTO session_search (session_key, seq, doc) VALUES (?1, ?2, to_tsvector('simple', ?3))`,
	Delete: `DELETE FROM session_search WHERE session_key = ?1 AND seq = ?2`,
	ForgetBatch: `DELETE FROM session_search WHERE session_key = (SELECT session_key FROM sessions WHERE id = ?1)
		AND seq IN (SELECT seq FROM session_search WHERE session_key = (SELECT session_key FROM sessions WHERE id = ?1)
		ORDER BY seq LIMIT ?2)`,
	CopyFork: `INSERT INTO session_search (session_key, seq, doc)
		SELECT ?1, seq, doc FROM session_search WHERE session_key = ?2 AND seq >= 1 AND seq <= ?3`,
	StorageFrom:  `session_search x JOIN sessions s ON s.session_key = x.session_key`,
	StorageBytes: `pg_column_size(x.doc)`,
	Match: func(terms []string) (string, []any) {
		return `SELECT session_key FROM session_search WHERE doc @@ to_tsquery('simple', ?)`, []any{searchQuery(terms)}
	},
	Probe: probeSearch,
	MetadataEquals: func(key, value string) (string, []any) {
		return `jsonb_typeof(metadata::jsonb -> ?) = 'string' AND metadata::jsonb ->> ? = ?`, []any{key, key, value}
	},
}

// probeFraction is the share of the documents a search's terms must be estimated in for it to
// probe: a word in 1% of a session's hundred messages is in most sessions, so a window of them
// fills a page; a rarer one is collected, which costs it less than a window of failed probes.
const probeFraction = 0.01

// probeSearch is SessionSearch.Probe: an EXISTS over the session's rows by its key, each tested
// with ts_match_vq. It probes where the statistics ANALYZE keeps of session_search.doc (the most
// common lexemes and the share of the documents holding each) put every term in at least
// probeFraction of the documents (the last term: the lexemes it starts, summed); a term not among
// them is rarer than all that are. Without statistics (a table never analysed) it collects.
func probeSearch(ctx context.Context, c sqlq.Conn, q store.SessionQuery) (string, []any, error) {
	cond := `EXISTS (SELECT 1 FROM session_search x WHERE x.session_key = w.session_key
		AND ts_match_vq(x.doc, to_tsquery('simple', ?)))`
	args := []any{searchQuery(q.Terms)}
	if q.Plan == store.SearchPlanProbe || q.ProbeAbove > 0 {
		return cond, args, nil
	}
	whole, prefix := q.Terms[:len(q.Terms)-1], q.Terms[len(q.Terms)-1]
	rows, err := c.Query(ctx, `SELECT e.elem, e.freq FROM pg_stats s,
		unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e (elem, freq)
		WHERE s.schemaname = current_schema() AND s.tablename = 'session_search' AND s.attname = 'doc'
		AND e.elem IS NOT NULL AND (e.elem = ANY (?::text[]) OR starts_with(e.elem, ?))`, whole, prefix)
	if err != nil {
		return "", nil, err
	}
	defer rows.Close()
	share := map[string]float64{}
	for rows.Next() {
		var elem string
		var freq float64
		if err := rows.Scan(&elem, &freq); err != nil {
			return "", nil, err
		}
		if strings.HasPrefix(elem, prefix) {
			share[prefix+"*"] += freq
		}
		share[elem] += freq
	}
	if err := rows.Err(); err != nil {
		return "", nil, err
	}
	for _, t := range append(slices.Clip(whole), prefix+"*") { // a copy: whole shares q.Terms
		if share[t] < probeFraction {
			return "", nil, nil
		}
	}
	return cond, args, nil
}

// searchQuery is the tsquery holding every term, the last as a prefix.
func searchQuery(terms []string) string {
	q := sqlq.QuoteEach(terms, `'`)
	q[len(q)-1] += ":*"
	return strings.Join(q, " & ")
}

// rebuildSearch fills session_search from the messages each session shows: its own and those it
// reads through its fork chain (an ancestor's rows up to the fork point of the level below it),
// less its tombstones. It is the statement with which migration 0025 indexed the messages it
// found.
const rebuildSearch = `WITH RECURSIVE reach (reader, reader_key, src, upto) AS (
	SELECT id, session_key, id, 9223372036854775807::bigint FROM sessions
	UNION ALL
	SELECT r.reader, r.reader_key, s.parent_id, least(r.upto, s.fork_seq::bigint)
	FROM reach r JOIN sessions s ON s.id = r.src WHERE s.parent_id IS NOT NULL
)
INSERT INTO session_search (session_key, seq, doc)
	SELECT r.reader_key, m.seq, to_tsvector('simple', left(m.content, 65536))
	FROM reach r JOIN sessions o ON o.id = r.src
	JOIN messages m ON m.session_key = o.session_key AND m.seq <= r.upto
		AND (o.parent_id IS NULL OR m.seq > o.fork_seq)
	WHERE m.content <> ''
		AND NOT EXISTS (SELECT 1 FROM message_deletions d WHERE d.session_id = r.reader AND d.seq = m.seq)`

// RebuildSessionSearch makes the session search index anew from the messages, in tx, and returns
// how many documents it holds. carryon copy runs it after copying a SQLite deployment, whose
// full-text index (an FTS5 table) is not copied.
func RebuildSessionSearch(ctx context.Context, tx pgx.Tx) (int64, error) {
	if _, err := tx.Exec(ctx, `DELETE FROM session_search`); err != nil {
		return 0, fmt.Errorf("postgres: empty the session search index: %w", err)
	}
	tag, err := tx.Exec(ctx, rebuildSearch)
	if err != nil {
		return 0, fmt.Errorf("postgres: rebuild the session search index: %w", err)
	}
	return tag.RowsAffected(), nil
}
