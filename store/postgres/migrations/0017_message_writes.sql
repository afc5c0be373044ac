-- A message's run and request ids are stored once per write, not in every message row: the
-- 36-byte request id of a turn repeated in each of its messages was a sixth of the row. A row of
-- message_writes names the write (session and version, which a write moves by one) and the seq
-- range of its messages (lo..hi: a fork whose parent was deleted holds copies of its ancestors'
-- rows, whose versions are theirs, so a version alone may name two writes there); only a write
-- with a run or a request id has one. The existing rows' ids become one row per run of
-- consecutive messages with the same session, version and ids.
CREATE TABLE message_writes (
	session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	version    BIGINT NOT NULL,
	lo         BIGINT NOT NULL,
	hi         BIGINT NOT NULL,
	request_id TEXT NOT NULL DEFAULT '',
	run_id     TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (session_id, version, lo)
);
INSERT INTO message_writes (session_id, version, lo, hi, request_id, run_id)
	SELECT session_id, version, min(seq), max(seq), request_id, run_id FROM (
		SELECT session_id, version, seq, request_id, run_id, seq - row_number() OVER (
			PARTITION BY session_id, version, request_id, run_id ORDER BY seq) AS island
		FROM messages WHERE request_id <> '' OR run_id <> '') AS g
	GROUP BY session_id, version, request_id, run_id, island;
ALTER TABLE messages DROP COLUMN run_id, DROP COLUMN request_id;
