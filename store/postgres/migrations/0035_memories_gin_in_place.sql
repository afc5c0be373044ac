-- Long-term memory's full-text index is written in place by every write (fastupdate off) instead
-- of through GIN's pending list: a search scans the whole pending list, which holds up to
-- gin_pending_list_limit (4 MB) of writes until a vacuum merges them, so that after a few
-- thousand writes a keyword search of a 10,000-item memory cost 15 ms (the planner then preferred
-- a scan of every row of the owner) where the merged index answers in a tenth of a millisecond.
-- The pending list there is merged now.
ALTER INDEX memories_tsv SET (fastupdate = off);
SELECT gin_clean_pending_list('memories_tsv'::regclass);
