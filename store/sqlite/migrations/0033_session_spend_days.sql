-- A session's spend per UTC day (GET /v1/sessions/{id}/usage): the counters of session_spend
-- again, by day ('2026-12-06') instead of by model, added to in the same transaction. They go with
-- the session; a fork starts with none. Days before this migration are not known (session_spend
-- has no day), so a session's days may sum to less than its total.
CREATE TABLE session_spend_days (
	session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	day           TEXT NOT NULL,
	owner_id      TEXT NOT NULL,
	calls         INTEGER NOT NULL DEFAULT 0,
	input_tokens  INTEGER NOT NULL DEFAULT 0,
	output_tokens INTEGER NOT NULL DEFAULT 0,
	cached_tokens INTEGER NOT NULL DEFAULT 0,
	cost          INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (session_id, day)
);
