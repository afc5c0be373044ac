-- Semantic recall of long-term memory. An item's vector lives in its own row, written by the same
-- transaction as the item (a put clears it; the vector of the new text follows in the same
-- transaction, or later from the re-embedding job): little-endian float32 values, unit length,
-- and the embedding model that made them, so that a change of model marks the item stale.
ALTER TABLE memories ADD COLUMN embedding BLOB;
ALTER TABLE memories ADD COLUMN embedding_model TEXT;
-- One counter per owner, one more at every write of the owner's memory: the vectors an instance
-- holds in memory for search are good while the counter is where it was when they were read.
CREATE TABLE memory_generations (
	owner_id TEXT PRIMARY KEY,
	gen      INTEGER NOT NULL
) WITHOUT ROWID;
-- The values a consolidating write replaced (its `supersedes`): an item's earlier versions.
CREATE TABLE memory_versions (
	owner_id      TEXT NOT NULL,
	namespace     TEXT NOT NULL,
	key           TEXT NOT NULL,
	version       INTEGER NOT NULL,
	value         TEXT NOT NULL,
	text          TEXT NOT NULL,
	superseded_at INTEGER NOT NULL,
	PRIMARY KEY (owner_id, namespace, key, version)
) WITHOUT ROWID;
-- Background jobs that one instance runs at a time (the re-embedding of stale vectors): who holds
-- each, until when, and where it got to (its journal: a job taken over resumes from there).
CREATE TABLE job_leases (
	name       TEXT PRIMARY KEY,
	holder     TEXT NOT NULL,
	expires_at INTEGER NOT NULL,
	state      TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
-- How far facts were learned from each session (its extraction): the last message covered and
-- the session version then. Moved on in the transaction that writes the facts, only from where
-- the extraction started, so a session's turns are learned from once.
CREATE TABLE memory_extractions (
	owner_id     TEXT NOT NULL,
	session_id   TEXT NOT NULL,
	seq          INTEGER NOT NULL,
	version      INTEGER NOT NULL,
	extracted_at INTEGER NOT NULL,
	PRIMARY KEY (owner_id, session_id)
) WITHOUT ROWID;
