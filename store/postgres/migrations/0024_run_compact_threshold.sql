-- A run's own automatic compaction threshold in tokens (NewRun.CompactThreshold: the OpenAI door's
-- context_management compact_threshold), 0 when the run compacts as its profile says.
ALTER TABLE runs ADD COLUMN compact_threshold INTEGER NOT NULL DEFAULT 0;
