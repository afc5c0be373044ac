package sqlite

import (
	"strings"

	"github.com/carryon-hub/carryon/internal/store/sqlq"
)

// Session search on SQLite: the FTS5 table session_search (migration 0025), one document per
// message a session shows under rowid = session_key * 2^32 + seq (session keys are serial here,
// so they stay far below 2^31, and a session's documents are one rowid range). A search
// matches the FTS5 expression "t1" AND "t2" … AND "tn"* (every term quoted; terms hold only
// letters and digits, so no FTS5 syntax can get in) and keeps the sessions the matching rowids
// name; the shared query keeps the owner's among them.
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
