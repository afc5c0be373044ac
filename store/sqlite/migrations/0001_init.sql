-- Users and their API keys (only a SHA-256 of each key is stored).
CREATE TABLE users (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	admin      INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL
);

CREATE TABLE api_keys (
	id           TEXT PRIMARY KEY,
	user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	prefix       TEXT NOT NULL,
	hash         TEXT NOT NULL UNIQUE,
	created_at   INTEGER NOT NULL,
	revoked_at   INTEGER,
	last_used_at INTEGER
);
CREATE INDEX api_keys_user ON api_keys (user_id, created_at, id);

-- Sessions. parent_id + fork_seq name the session a fork reads through (copy on write); the
-- foreign key has no action so that deleting a parent whose forks were not materialised fails.
CREATE TABLE sessions (
	id               TEXT PRIMARY KEY,
	owner_id         TEXT NOT NULL,
	title            TEXT NOT NULL DEFAULT '',
	status           TEXT NOT NULL,
	version          INTEGER NOT NULL,
	parent_id        TEXT REFERENCES sessions (id),
	fork_seq         INTEGER NOT NULL DEFAULT 0,
	fork_version     INTEGER NOT NULL DEFAULT 0,
	created_at       INTEGER NOT NULL,
	updated_at       INTEGER NOT NULL,
	last_active_at   INTEGER NOT NULL,
	expires_at       INTEGER NOT NULL,
	idle_ttl_seconds INTEGER NOT NULL DEFAULT 0,
	message_count    INTEGER NOT NULL DEFAULT 0,
	last_seq         INTEGER NOT NULL DEFAULT 0,
	memory_version   INTEGER NOT NULL DEFAULT 0,
	metadata         TEXT
);
CREATE INDEX sessions_owner_active ON sessions (owner_id, last_active_at DESC, id DESC);
CREATE INDEX sessions_expires ON sessions (expires_at);
CREATE INDEX sessions_parent ON sessions (parent_id) WHERE parent_id IS NOT NULL;

-- Append-only messages, keyed by (session_id, seq): reading the last K is O(K).
CREATE TABLE messages (
	session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,
	role         TEXT NOT NULL,
	kind         TEXT NOT NULL DEFAULT 'message',
	content      TEXT NOT NULL DEFAULT '',
	name         TEXT NOT NULL DEFAULT '',
	tool_calls   TEXT,
	tool_call_id TEXT NOT NULL DEFAULT '',
	covers_from  INTEGER NOT NULL DEFAULT 0,
	covers_to    INTEGER NOT NULL DEFAULT 0,
	run_id       TEXT NOT NULL DEFAULT '',
	request_id   TEXT NOT NULL DEFAULT '',
	tokens       INTEGER NOT NULL DEFAULT 0,
	metadata     TEXT,
	version      INTEGER NOT NULL,
	created_at   INTEGER NOT NULL,
	PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;

-- The current working memory document of each session and its history.
CREATE TABLE working_memory (
	session_id     TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
	document       TEXT NOT NULL,
	memory_version INTEGER NOT NULL
);

CREATE TABLE memory_revisions (
	session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	memory_version INTEGER NOT NULL,
	version        INTEGER NOT NULL,
	patch          TEXT,
	document       TEXT NOT NULL,
	run_id         TEXT NOT NULL DEFAULT '',
	created_at     INTEGER NOT NULL,
	PRIMARY KEY (session_id, memory_version)
) WITHOUT ROWID;

-- Request ids (idempotency keys), scoped per owner.
CREATE TABLE idempotency (
	owner_id    TEXT NOT NULL,
	key         TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	state       TEXT NOT NULL,
	result      BLOB,
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL,
	PRIMARY KEY (owner_id, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_expires ON idempotency (expires_at);
