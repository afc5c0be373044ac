-- Session search (GET /v1/sessions?q=): the full-text index of message text, with the 'simple'
-- configuration (no stemming, no stop words: the words SQLite's unicode61 finds). One row per
-- message a session shows: a fork has rows of its own for the messages it inherits (copied from
-- its parent's when it is made), so that a fork is found by the text it shows, and a tombstone
-- removes the row of its session only. Only the tsvector is stored, not the text again. The
-- driver writes it in the transaction of the change (no triggers); a deleted session's rows go
-- with it.
CREATE TABLE session_search (
	session_key BIGINT NOT NULL REFERENCES sessions (session_key) ON DELETE CASCADE,
	seq         BIGINT NOT NULL,
	doc         TSVECTOR NOT NULL,
	PRIMARY KEY (session_key, seq)
);
CREATE INDEX session_search_doc ON session_search USING GIN (doc);

-- Existing messages: each session's visible ones, its own and those it reads through its fork
-- chain (an ancestor's rows up to the fork point of the level below it), less its tombstones.
WITH RECURSIVE reach (reader, reader_key, src, upto) AS (
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
		AND NOT EXISTS (SELECT 1 FROM message_deletions d WHERE d.session_id = r.reader AND d.seq = m.seq);
