-- Forgetting a user (the right to be forgotten) takes many bounded transactions. The first marks
-- the user: forgetting_at is when it began (NULL: a user in good standing), and from then on the
-- user is invisible (its name is replaced by "forgetting:" and its id, its keys are gone);
-- forget_receipt is the JSON of what has been deleted so far, added to in the same transaction as
-- each batch, so a forget cut off by a crash continues with exact counts. The user row itself is
-- the last thing deleted.
ALTER TABLE users ADD COLUMN forgetting_at INTEGER;
ALTER TABLE users ADD COLUMN forget_receipt TEXT;
