-- A working memory revision stores its whole document only every 16 memory versions (a
-- snapshot); the others store their patch alone (document NULL) and are read by applying the
-- patches since the snapshot before them. Revisions stored before this migration keep their
-- documents: each is a snapshot. SQLite cannot drop a NOT NULL constraint, so the table is
-- rebuilt.
CREATE TABLE memory_revisions_new (
	session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	memory_version INTEGER NOT NULL,
	version        INTEGER NOT NULL,
	patch          TEXT,
	document       TEXT,
	run_id         TEXT NOT NULL DEFAULT '',
	created_at     INTEGER NOT NULL,
	PRIMARY KEY (session_id, memory_version)
) WITHOUT ROWID;
INSERT INTO memory_revisions_new (session_id, memory_version, version, patch, document, run_id, created_at)
	SELECT session_id, memory_version, version, patch, document, run_id, created_at FROM memory_revisions;
DROP TABLE memory_revisions;
ALTER TABLE memory_revisions_new RENAME TO memory_revisions;

-- A plain message (kind 'message', almost every row) stores its kind as '' : the word repeated
-- in every row cost 7 bytes a message. Readers take '' as 'message'.
UPDATE messages SET kind = '' WHERE kind = 'message';
