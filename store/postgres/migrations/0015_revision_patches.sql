-- A working memory revision stores its whole document only every 16 memory versions (a
-- snapshot); the others store their patch alone (document NULL) and are read by applying the
-- patches since the snapshot before them. Revisions stored before this migration keep their
-- documents: each is a snapshot.
ALTER TABLE memory_revisions ALTER COLUMN document DROP NOT NULL;
