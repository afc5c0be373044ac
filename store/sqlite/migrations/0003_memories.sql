-- Long-term memory: per-user items under (namespace, key). id is an INTEGER PRIMARY KEY so that
-- it is a stable rowid (VACUUM keeps it), which links an item to its full-text row.
CREATE TABLE memories (
	id         INTEGER PRIMARY KEY,
	owner_id   TEXT NOT NULL,
	namespace  TEXT NOT NULL,
	key        TEXT NOT NULL,
	value      TEXT NOT NULL,
	text       TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	expires_at INTEGER,
	UNIQUE (owner_id, namespace, key)
);
-- The owner's most recently updated items (a search without terms).
CREATE INDEX memories_recent ON memories (owner_id, updated_at DESC);
-- What the sweeper purges.
CREATE INDEX memories_expiry ON memories (expires_at) WHERE expires_at IS NOT NULL;

-- The full-text index of memories: one row per item with rowid = memories.id and the document
-- store.MemoryDocument builds. The driver writes it in the same transaction as the item (no
-- triggers), and every search joins it back to memories and filters by owner there.
CREATE VIRTUAL TABLE memories_fts USING fts5(doc, tokenize = 'unicode61 remove_diacritics 2');
