-- Schedules: runs a session starts by itself, at the ticks of a cron expression (kind cron, spec
-- the 5 fields), every interval (kind every, spec a Go duration) or once (kind at, spec the time
-- in RFC 3339). owner_id repeats the session's owner, as in runs. next_fire_at is the next tick
-- while status is active, NULL otherwise; the scheduler claims the rows whose next_fire_at has
-- come. Times are unix microseconds, as everywhere.
CREATE TABLE schedules (
	id           TEXT COLLATE "C" PRIMARY KEY,
	session_id   TEXT COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	owner_id     TEXT COLLATE "C" NOT NULL,
	kind         TEXT NOT NULL,
	spec         TEXT NOT NULL,
	timezone     TEXT NOT NULL,
	message      TEXT NOT NULL,
	agent        TEXT NOT NULL DEFAULT '',
	overlap      TEXT NOT NULL,
	catch_up     TEXT NOT NULL,
	until_at     BIGINT,
	status       TEXT NOT NULL,
	next_fire_at BIGINT,
	last_tick    BIGINT,
	last_outcome TEXT NOT NULL DEFAULT '',
	last_run_id  TEXT NOT NULL DEFAULT '',
	last_error   TEXT NOT NULL DEFAULT '',
	fired        BIGINT NOT NULL DEFAULT 0,
	created_at   BIGINT NOT NULL,
	updated_at   BIGINT NOT NULL
);
-- A session's schedules and an owner's, newest first (keyset paging).
CREATE INDEX schedules_session ON schedules (session_id, created_at DESC, id DESC);
CREATE INDEX schedules_owner ON schedules (owner_id, created_at DESC, id DESC);
-- What the scheduler claims, soonest first.
CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE next_fire_at IS NOT NULL;
