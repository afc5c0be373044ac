-- Webhooks (issue 26; same conventions as 0001_init.sql): an owner's subscriptions to run events, and the outbox of their
-- deliveries. A delivery row is written in the transaction that changes the run, so a crash can
-- neither lose an event nor invent one; the delivery worker leases pending rows, POSTs them and
-- records the outcome in the same row (the delivery log); retry_until, set at the first attempt
-- (and cleared by a redeliver), bounds its retries. events is the subscribed event types
-- between commas (",run.completed,run.failed,"), matched with LIKE. secret and prev_secret are
-- the signing secrets (whsec_…), which the worker needs in clear to sign. Deleting a webhook, its
-- session or its owner deletes its rows.
CREATE TABLE webhooks (
	id                TEXT COLLATE "C" PRIMARY KEY,
	owner_id          TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	session_id        TEXT COLLATE "C" REFERENCES sessions (id) ON DELETE CASCADE,
	url               TEXT NOT NULL,
	events            TEXT NOT NULL,
	secret            TEXT NOT NULL,
	prev_secret       TEXT NOT NULL DEFAULT '',
	prev_secret_until BIGINT,
	paused            BIGINT NOT NULL DEFAULT 0,
	created_at        BIGINT NOT NULL,
	updated_at        BIGINT NOT NULL
);
CREATE INDEX webhooks_owner ON webhooks (owner_id, created_at, id);
CREATE INDEX webhooks_session ON webhooks (session_id) WHERE session_id IS NOT NULL;

CREATE TABLE webhook_deliveries (
	id               TEXT COLLATE "C" PRIMARY KEY,
	webhook_id       TEXT COLLATE "C" NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
	owner_id         TEXT COLLATE "C" NOT NULL,
	session_id       TEXT COLLATE "C" REFERENCES sessions (id) ON DELETE CASCADE,
	event_id         TEXT COLLATE "C" NOT NULL,
	event_type       TEXT NOT NULL,
	payload          TEXT NOT NULL,
	status           TEXT NOT NULL,
	attempts         BIGINT NOT NULL DEFAULT 0,
	next_attempt_at  BIGINT NOT NULL,
	retry_until      BIGINT,
	lease_owner      TEXT NOT NULL DEFAULT '',
	lease_expires_at BIGINT,
	last_error       TEXT NOT NULL DEFAULT '',
	response_code    BIGINT NOT NULL DEFAULT 0,
	created_at       BIGINT NOT NULL,
	updated_at       BIGINT NOT NULL,
	delivered_at     BIGINT,
	UNIQUE (webhook_id, event_id)
);
-- A webhook's delivery log, newest first.
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, created_at DESC, id DESC);
-- What the worker may claim, oldest due first (the outbox depth is its size).
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_session ON webhook_deliveries (session_id) WHERE session_id IS NOT NULL;
