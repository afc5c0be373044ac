-- A plain message (kind 'message', almost every row) stores its kind as '' : the word repeated
-- in every row cost 7 bytes a message. Readers take '' as 'message'.
UPDATE messages SET kind = '' WHERE kind = 'message';
