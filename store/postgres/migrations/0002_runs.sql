-- Runs of the agent on a session. owner_id repeats the session's owner so that every read is
-- checked against it without a join. lease_expires_at and the *_at columns below created_at are
-- NULL until set. Same conventions as 0001_init.sql.
CREATE TABLE runs (
	id               TEXT COLLATE "C" PRIMARY KEY,
	session_id       TEXT COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	owner_id         TEXT COLLATE "C" NOT NULL,
	status           TEXT NOT NULL,
	message          TEXT NOT NULL DEFAULT '',
	trigger_seq      BIGINT NOT NULL DEFAULT 0,
	request_id       TEXT NOT NULL DEFAULT '',
	model            TEXT NOT NULL DEFAULT '',
	multitask        TEXT NOT NULL DEFAULT '',
	step             BIGINT NOT NULL DEFAULT 0,
	attempt          BIGINT NOT NULL DEFAULT 0,
	lease_owner      TEXT NOT NULL DEFAULT '',
	lease_expires_at BIGINT,
	stop_requested   TEXT NOT NULL DEFAULT '',
	reply            TEXT NOT NULL DEFAULT '',
	error            TEXT NOT NULL DEFAULT '',
	input_tokens     BIGINT NOT NULL DEFAULT 0,
	output_tokens    BIGINT NOT NULL DEFAULT 0,
	created_at       BIGINT NOT NULL,
	updated_at       BIGINT NOT NULL,
	started_at       BIGINT,
	finished_at      BIGINT
);
-- A session's runs newest first (ListRuns, keyset paging).
CREATE INDEX runs_session ON runs (session_id, created_at DESC, id DESC);
-- The runs that hold a session (ActiveRuns, and the busy check of RunnableRuns). Finished runs,
-- the vast majority, are not in it.
CREATE INDEX runs_active ON runs (session_id, created_at, id)
	WHERE status IN ('queued', 'running', 'waiting_approval');
-- What the runner may take, oldest first (RunnableRuns).
CREATE INDEX runs_runnable ON runs (created_at, id) WHERE status IN ('queued', 'running');

-- The tool journal: one row per tool call of a run step, journaled before the tool runs.
-- session_id is the run's session, repeated for RecentActions.
CREATE TABLE actions (
	id                 TEXT COLLATE "C" PRIMARY KEY,
	run_id             TEXT COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	session_id         TEXT COLLATE "C" NOT NULL,
	step               BIGINT NOT NULL,
	idx                BIGINT NOT NULL,
	attempt            BIGINT NOT NULL DEFAULT 0,
	call_id            TEXT NOT NULL DEFAULT '',
	tool               TEXT NOT NULL,
	args               TEXT,
	effect             TEXT NOT NULL,
	status             TEXT NOT NULL,
	idempotency_key    TEXT NOT NULL DEFAULT '',
	fingerprint_before TEXT NOT NULL DEFAULT '',
	fingerprint_after  TEXT NOT NULL DEFAULT '',
	result             TEXT NOT NULL DEFAULT '',
	error              TEXT NOT NULL DEFAULT '',
	started_at         BIGINT NOT NULL,
	finished_at        BIGINT,
	UNIQUE (run_id, step, idx)
);
CREATE INDEX actions_session ON actions (session_id, started_at DESC, step DESC, idx DESC);

-- One checkpoint per finished step: pointers into the session, never copies.
CREATE TABLE checkpoints (
	run_id          TEXT COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	step            BIGINT NOT NULL,
	message_seq     BIGINT NOT NULL,
	memory_version  BIGINT NOT NULL,
	pending_actions TEXT,
	created_at      BIGINT NOT NULL,
	PRIMARY KEY (run_id, step)
);

-- Each run's event stream, seq from 1 without gaps (AppendEvent locks the run row, then takes
-- MAX(seq) + 1 by this primary key).
CREATE TABLE run_events (
	run_id     TEXT COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	seq        BIGINT NOT NULL,
	type       TEXT NOT NULL,
	data       TEXT,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (run_id, seq)
);
