-- A session's summaries (its compactions: messages of kind summary) by seq, so listing them reads
-- only them however long the history is.
CREATE INDEX messages_summaries ON messages (session_key, seq) WHERE kind = 'summary';
