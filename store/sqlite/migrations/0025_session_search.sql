-- Session search (GET /v1/sessions?q=): the full-text index of message text. One document per
-- message a session shows, under rowid = session_key * 2^32 + seq: a fork has documents of its
-- own for the messages it inherits (copied from its parent's when it is made), so that a fork is
-- found by the text it shows, and a tombstone removes the document of its session only. The
-- driver writes it in the transaction of the change (no triggers). secure-delete makes a delete
-- remove the terms from the index pages at once, so a deleted message's words are not left in
-- session_search_data until a merge.
CREATE VIRTUAL TABLE session_search USING fts5(doc, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO session_search (session_search, rank) VALUES ('secure-delete', 1);

-- Existing messages: each session's visible ones, its own and those it reads through its fork
-- chain (an ancestor's rows up to the fork point of the level below it), less its tombstones.
WITH RECURSIVE reach (reader, reader_key, src, upto) AS (
	SELECT id, session_key, id, 9223372036854775807 FROM sessions
	UNION ALL
	SELECT r.reader, r.reader_key, s.parent_id, min(r.upto, s.fork_seq)
	FROM reach r JOIN sessions s ON s.id = r.src WHERE s.parent_id IS NOT NULL
)
INSERT INTO session_search (rowid, doc)
	SELECT r.reader_key * 4294967296 + m.seq, substr(m.content, 1, 65536)
	FROM reach r JOIN sessions o ON o.id = r.src
	JOIN messages m ON m.session_key = o.session_key AND m.seq <= r.upto
		AND (o.parent_id IS NULL OR m.seq > o.fork_seq)
	WHERE m.content <> ''
		AND NOT EXISTS (SELECT 1 FROM message_deletions d WHERE d.session_id = r.reader AND d.seq = m.seq);
