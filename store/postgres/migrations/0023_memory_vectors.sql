-- Semantic recall of long-term memory, as the SQLite driver's 0023: an item's vector in its own
-- row (little-endian float32, unit length) with the model that made it; one counter per owner,
-- one more at every write of the owner's memory (the check of an instance's in-memory vectors,
-- and the row a consolidating write locks); the values consolidating writes replaced.
ALTER TABLE memories ADD COLUMN embedding BYTEA;
ALTER TABLE memories ADD COLUMN embedding_model TEXT COLLATE "C";
CREATE TABLE memory_generations (
	owner_id TEXT COLLATE "C" PRIMARY KEY,
	gen      BIGINT NOT NULL
);
CREATE TABLE memory_versions (
	owner_id      TEXT COLLATE "C" NOT NULL,
	namespace     TEXT COLLATE "C" NOT NULL,
	key           TEXT COLLATE "C" NOT NULL,
	version       BIGINT NOT NULL,
	value         TEXT NOT NULL,
	text          TEXT NOT NULL,
	superseded_at BIGINT NOT NULL,
	PRIMARY KEY (owner_id, namespace, key, version)
);
-- Background jobs that one instance runs at a time, with where each got to (its journal).
CREATE TABLE job_leases (
	name       TEXT COLLATE "C" PRIMARY KEY,
	holder     TEXT NOT NULL,
	expires_at BIGINT NOT NULL,
	state      TEXT NOT NULL DEFAULT ''
);
-- How far facts were learned from each session (its extraction), as the SQLite driver's.
CREATE TABLE memory_extractions (
	owner_id     TEXT COLLATE "C" NOT NULL,
	session_id   TEXT COLLATE "C" NOT NULL,
	seq          BIGINT NOT NULL,
	version      BIGINT NOT NULL,
	extracted_at BIGINT NOT NULL,
	PRIMARY KEY (owner_id, session_id)
);
