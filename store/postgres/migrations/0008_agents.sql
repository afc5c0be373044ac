-- Agent profiles: a session is bound to one at creation (runs use it unless they name another),
-- and a run records the profile it executes and the digest of that profile's definition. Rows
-- from before profiles ran the one agent the server's flags made, which is now named "default".
ALTER TABLE sessions ADD COLUMN agent TEXT NOT NULL DEFAULT 'default';
ALTER TABLE runs ADD COLUMN agent TEXT NOT NULL DEFAULT 'default';
ALTER TABLE runs ADD COLUMN agent_digest TEXT NOT NULL DEFAULT '';
