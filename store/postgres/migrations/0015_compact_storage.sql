-- A working memory revision stores its whole document only every 16 memory versions (a
-- snapshot); the others store their patch alone (document NULL) and are read by applying the
-- patches since the snapshot before them. Revisions stored before this migration keep their
-- documents: each is a snapshot.
ALTER TABLE memory_revisions ALTER COLUMN document DROP NOT NULL;

-- A plain message (kind 'message', almost every row) stores its kind as '' : the word repeated
-- in every row cost 7 bytes a message. Readers take '' as 'message'.
UPDATE messages SET kind = '' WHERE kind = 'message';
