-- A long-term memory item's version: 1 when first put, one more at every replace, so that a put
-- or delete can expect one (a safe read-modify-write). Items stored before count as version 1.
ALTER TABLE memories ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
