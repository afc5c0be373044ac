-- Whether a session's title was derived from its first input (the OpenAI door titles a new
-- conversation with the start of its first message) rather than set by the user: deleting the
-- message it came from clears a derived title, never one the user set. 1 derived, 0 set (every
-- title stored before this migration counts as set).
ALTER TABLE sessions ADD COLUMN title_derived INTEGER NOT NULL DEFAULT 0;
