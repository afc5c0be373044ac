-- Deleted messages: a tombstone hides one seq of a session's visible history from that session
-- only. The message row stays where it is (a fork may share it); a fork made later copies the
-- tombstones of its parent's history as it was then, so it does not see them either.
-- version is the session version the delete produced (1 for tombstones a fork copied).
CREATE TABLE message_deletions (
	session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	version    INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
