package postgres

import (
	"strings"

	"github.com/carryon-hub/carryon/internal/store/sqlq"
)

// Session search on PostgreSQL: the table session_search (migration 0025), one tsvector per
// message a session shows under (session_key, seq), with a GIN index; its rows go with their
// session by a foreign key with ON DELETE CASCADE. A search matches the tsquery 't1' & 't2' & …
// & 'tn':* (every term quoted; terms hold only letters and digits, so no tsquery syntax can get
// in) and keeps the sessions the matching rows name; the shared query keeps the owner's among
// them.
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
	MetadataEquals: func(key, value string) (string, []any) {
		return `jsonb_typeof(metadata::jsonb -> ?) = 'string' AND metadata::jsonb ->> ? = ?`, []any{key, key, value}
	},
}

// searchQuery is the tsquery holding every term, the last as a prefix.
func searchQuery(terms []string) string {
	q := sqlq.QuoteEach(terms, `'`)
	q[len(q)-1] += ":*"
	return strings.Join(q, " & ")
}
