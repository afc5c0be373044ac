-- A session's external id: an id the client chose at create, unique among its owner's sessions
-- (NULL when it chose none), so that a client that keeps its own ids (an ADK session id) can find
-- or create the session in one call.
ALTER TABLE sessions ADD COLUMN external_id TEXT;
CREATE UNIQUE INDEX sessions_owner_external ON sessions (owner_id, external_id) WHERE external_id IS NOT NULL;
