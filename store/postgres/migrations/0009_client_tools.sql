-- Client-side tools and approval before a call. A run keeps the client tools it was started with
-- (a JSON array, NULL for none); an action says who runs it (executor '' for carryon, 'client'),
-- its approval state ('' when its tool asks for none) and the model's arguments when a user
-- edited them on approval.
ALTER TABLE runs ADD COLUMN tools TEXT;
ALTER TABLE actions ADD COLUMN executor TEXT NOT NULL DEFAULT '';
ALTER TABLE actions ADD COLUMN approval TEXT NOT NULL DEFAULT '';
ALTER TABLE actions ADD COLUMN original_args TEXT;

-- A run waiting for a client's tool outputs holds its session like the other active states.
DROP INDEX runs_active;
CREATE INDEX runs_active ON runs (session_id, created_at, id)
	WHERE status IN ('queued', 'running', 'waiting_approval', 'requires_action');
-- The runs waiting for tool outputs, by when they began to wait (ExpireWaitingRuns).
CREATE INDEX runs_requires_action ON runs (updated_at) WHERE status = 'requires_action';
