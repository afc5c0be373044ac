-- PostgreSQL's migration 0035 writes long-term memory's GIN index in place (fastupdate off).
-- SQLite's FTS5 index has no pending list, so there is nothing to change here: the migration is
-- here so that both drivers keep one numbering (TestMigrationsShareNumbers).
SELECT 1;
