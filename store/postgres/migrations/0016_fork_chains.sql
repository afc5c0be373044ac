-- The segments a fork reads through, materialised when the fork is made: one line per segment,
-- "lo hi session_id" (the rows lo < seq <= hi of that ancestor), nearest ancestor first, only
-- the segments that are not empty. Reading a fork's history then costs one row, not one query
-- per ancestor. Forks made before this migration have no row and are read by walking their
-- parent links as before.
CREATE TABLE fork_chains (
	session_id TEXT COLLATE "C" PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
	segments   TEXT NOT NULL
);
