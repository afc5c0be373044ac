-- The full-text index of memories gets the owner as a column of its own (the hex of owner_id,
-- one token), so that a search matches the owner's rows inside the index, before any ranking,
-- instead of matching every user's rows and dropping the others' at the join. A search weights
-- the owner column 0 in bm25(). The rows are moved over from the old index unchanged.
ALTER TABLE memories_fts RENAME TO memories_fts_old;
CREATE VIRTUAL TABLE memories_fts USING fts5(doc, owner, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO memories_fts (rowid, doc, owner)
	SELECT f.rowid, f.doc, hex(m.owner_id) FROM memories_fts_old f JOIN memories m ON m.id = f.rowid;
DROP TABLE memories_fts_old;
