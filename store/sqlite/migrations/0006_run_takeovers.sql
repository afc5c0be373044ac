-- How many times a runner took a run over after its lease ran out (a crashed or paused runner).
-- Graceful hand-offs (a shutdown, an approval) do not count: the run manager parks a run when
-- this reaches its MaxAttempts.
ALTER TABLE runs ADD COLUMN takeovers INTEGER NOT NULL DEFAULT 0;
