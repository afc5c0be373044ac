-- The limits an admin set for a user (carryon.Limits as JSON: only the fields set; the others
-- are the server's defaults).
CREATE TABLE user_limits (
	user_id    TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
	limits     TEXT NOT NULL,
	updated_at BIGINT NOT NULL
);
-- What each server instance has counted of each user's requests (used: requests taken from the
-- user's token bucket since the instance started; prev_used: used as of the instance's previous
-- write of the row, so that a reader seeing the row first knows its last second) and how many
-- event streams the user has open on it now, written by the instance about once a second; every
-- instance reads the others' rows and counts them against the user's limits. Rows of an
-- instance that stopped writing go stale and are ignored, then deleted.
CREATE TABLE limit_shares (
	instance_id TEXT NOT NULL,
	user_id     TEXT NOT NULL,
	used        BIGINT NOT NULL,
	prev_used   BIGINT NOT NULL,
	streams     BIGINT NOT NULL,
	updated_at  BIGINT NOT NULL,
	PRIMARY KEY (instance_id, user_id)
);
CREATE INDEX limit_shares_updated ON limit_shares (updated_at);
-- The running runs of an owner, which a claim counts against the owner's max_concurrent_runs.
CREATE INDEX runs_running_owner ON runs (owner_id) WHERE status = 'running';
