-- Deleted messages: a tombstone hides one seq of a session's visible history from that session
-- only. The message row stays where it is (a fork may share it); a fork made later copies the
-- tombstones of its parent's history as it was then, so it does not see them either.
-- version is the session version the delete produced (1 for tombstones a fork copied).
CREATE TABLE message_deletions (
	session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	seq        BIGINT NOT NULL,
	version    BIGINT NOT NULL,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (session_id, seq)
);
