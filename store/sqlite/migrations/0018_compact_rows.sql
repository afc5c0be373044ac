-- Smaller rows for what every turn stores (issue 15's storage target).
--
-- A session gets a key, a small integer (session_key, given at insert: one more than the
-- largest), and its messages, their writes and its memory revisions name it by that key rather
-- than by its 31-byte id, which was a fifth of a message row. It is a column of its own, not the
-- rowid: VACUUM and VACUUM INTO (backups) may renumber rowids. The existing sessions are numbered
-- in the order they were created.
--
-- A message's run and request ids are stored once per write, not in every message row (the
-- 36-byte request id of a turn was repeated in each of its messages): a row of message_writes
-- names the write (session key and version, which a write moves by one) and the seq range of its
-- messages (lo..hi: a fork whose parent was deleted holds copies of its ancestors' rows, whose
-- versions are theirs, so a version alone may name two writes there); only a write with a run
-- or a request id has one. The existing ids become one row per run of consecutive messages with
-- the same session, version and ids.
--
-- The fork chains name sessions by key too: the stored ones are deleted here and the driver's
-- Migrate stores them again (sqlq BackfillForkChains).
ALTER TABLE sessions ADD COLUMN session_key INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET session_key = k.n
	FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM sessions) AS k
	WHERE k.id = sessions.id;
CREATE UNIQUE INDEX sessions_key ON sessions (session_key);

CREATE TABLE message_writes (
	session_key INTEGER NOT NULL REFERENCES sessions (session_key) ON DELETE CASCADE,
	version     INTEGER NOT NULL,
	lo          INTEGER NOT NULL,
	hi          INTEGER NOT NULL,
	request_id  TEXT NOT NULL DEFAULT '',
	run_id      TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (session_key, version, lo)
) WITHOUT ROWID;
INSERT INTO message_writes (session_key, version, lo, hi, request_id, run_id)
	SELECT s.session_key, g.version, min(g.seq), max(g.seq), g.request_id, g.run_id FROM (
		SELECT session_id, version, seq, request_id, run_id, seq - row_number() OVER (
			PARTITION BY session_id, version, request_id, run_id ORDER BY seq) AS island
		FROM messages WHERE request_id <> '' OR run_id <> '') AS g
	JOIN sessions s ON s.id = g.session_id
	GROUP BY s.session_key, g.version, g.request_id, g.run_id, g.island;

CREATE TABLE messages_new (
	session_key  INTEGER NOT NULL REFERENCES sessions (session_key) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,
	role         TEXT NOT NULL,
	kind         TEXT NOT NULL DEFAULT '',
	content      TEXT NOT NULL DEFAULT '',
	name         TEXT NOT NULL DEFAULT '',
	tool_calls   TEXT,
	tool_call_id TEXT NOT NULL DEFAULT '',
	covers_from  INTEGER NOT NULL DEFAULT 0,
	covers_to    INTEGER NOT NULL DEFAULT 0,
	tokens       INTEGER NOT NULL DEFAULT 0,
	metadata     TEXT,
	version      INTEGER NOT NULL,
	created_at   INTEGER NOT NULL,
	PRIMARY KEY (session_key, seq)
) WITHOUT ROWID;
INSERT INTO messages_new (session_key, seq, role, kind, content, name, tool_calls, tool_call_id, covers_from,
		covers_to, tokens, metadata, version, created_at)
	SELECT s.session_key, m.seq, m.role, m.kind, m.content, m.name, m.tool_calls, m.tool_call_id, m.covers_from,
		m.covers_to, m.tokens, m.metadata, m.version, m.created_at
	FROM messages m JOIN sessions s ON s.id = m.session_id;
DROP TABLE messages;
ALTER TABLE messages_new RENAME TO messages;

CREATE TABLE memory_revisions_new (
	session_key    INTEGER NOT NULL REFERENCES sessions (session_key) ON DELETE CASCADE,
	memory_version INTEGER NOT NULL,
	version        INTEGER NOT NULL,
	patch          TEXT,
	document       TEXT,
	run_id         TEXT NOT NULL DEFAULT '',
	created_at     INTEGER NOT NULL,
	PRIMARY KEY (session_key, memory_version)
) WITHOUT ROWID;
INSERT INTO memory_revisions_new (session_key, memory_version, version, patch, document, run_id, created_at)
	SELECT s.session_key, r.memory_version, r.version, r.patch, r.document, r.run_id, r.created_at
	FROM memory_revisions r JOIN sessions s ON s.id = r.session_id;
DROP TABLE memory_revisions;
ALTER TABLE memory_revisions_new RENAME TO memory_revisions;

DELETE FROM fork_chains;
