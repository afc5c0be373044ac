-- The segments a fork reads through, materialised when the fork is made: one line per segment,
-- "lo hi session_id" (the rows lo < seq <= hi of that ancestor), nearest ancestor first, only
-- the segments that are not empty. Reading a fork's history then costs one row, not one query
-- per ancestor. The driver's Migrate then stores the rows of the forks made before
-- (sqlq BackfillForkChains); a fork that has none is read by walking its parent links.
CREATE TABLE fork_chains (
	session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
	segments   TEXT NOT NULL
) WITHOUT ROWID;
