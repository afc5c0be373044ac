-- Checkpoints were never read: a step's commit (its tool results and the run's step counter, in
-- one transaction) is the point a run resumes from, and the tool journal says what each call did.
DROP TABLE checkpoints;
