-- A request id remembers the session its write belonged to (NULL: none, e.g. a delete's own id),
-- so that deleting or purging the session forgets its request ids with it: a repeat then finds
-- nothing to replay. Ids stored before this migration have no session and expire by their TTL.
ALTER TABLE idempotency ADD COLUMN session_id TEXT;
CREATE INDEX idempotency_session ON idempotency (session_id) WHERE session_id IS NOT NULL;

-- The closed sessions the sweeper purges when a closed-session retention is set, by when they
-- were closed (a closed session takes no writes, so updated_at is that time).
CREATE INDEX sessions_closed ON sessions (updated_at, id) WHERE status = 'closed';
