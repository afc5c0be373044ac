-- Long-term memory: per-user items under (namespace, key), equivalent to the SQLite driver's.
-- doc is the search document the driver writes (store.MemoryDocument); tsv is generated from it
-- with the 'simple' configuration (no stemming, no stop words: the same words SQLite's unicode61
-- tokenizer matches) and indexed with GIN. A generated column is plain SQL, not a trigger.
CREATE TABLE memories (
	owner_id   TEXT COLLATE "C" NOT NULL,
	namespace  TEXT COLLATE "C" NOT NULL,
	key        TEXT COLLATE "C" NOT NULL,
	value      TEXT NOT NULL,
	text       TEXT NOT NULL DEFAULT '',
	doc        TEXT NOT NULL DEFAULT '',
	tsv        TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple', doc)) STORED,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL,
	expires_at BIGINT,
	PRIMARY KEY (owner_id, namespace, key)
);
-- The owner's most recently updated items (a search without terms).
CREATE INDEX memories_recent ON memories (owner_id, updated_at DESC);
-- What the sweeper purges.
CREATE INDEX memories_expiry ON memories (expires_at) WHERE expires_at IS NOT NULL;
-- Full-text search.
CREATE INDEX memories_tsv ON memories USING GIN (tsv);
