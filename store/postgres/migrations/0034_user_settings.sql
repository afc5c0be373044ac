-- A user's own settings (GET/PATCH /v1/me/settings); a user without a row has the defaults
-- (learn_facts on). Forgetting the user deletes the row.
CREATE TABLE user_settings (
	user_id     TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
	learn_facts INTEGER NOT NULL DEFAULT 1
);
