-- Sessions are listed newest first by creation (created_at, id): keys that never change, so a
-- session written while a client pages through the list keeps its place instead of moving past it.
CREATE INDEX sessions_owner_created ON sessions (owner_id, created_at DESC, id DESC);
DROP INDEX sessions_owner_active;
