-- Budget holds (docs/API.md, "Budgets"): a model call in progress against its user's budgets,
-- one a run at most, taken in a write transaction before the call and deleted in the transaction
-- that records what the call spent. A hold counts while its run is running under a live lease, so
-- a crashed runner's holds stop counting when its lease runs out. tokens and cost are what the
-- hold stands for (twice the largest call the user's budgeted runs made, peak_* below).
CREATE TABLE budget_holds (
	run_id   TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
	owner_id TEXT NOT NULL,
	tokens   INTEGER NOT NULL,
	cost     INTEGER NOT NULL
);
CREATE INDEX budget_holds_owner ON budget_holds (owner_id);
-- The largest model call (tokens, and cost in carryon.NanoUSD) a run of the user made under a hold.
ALTER TABLE user_budgets ADD COLUMN peak_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE user_budgets ADD COLUMN peak_cost INTEGER NOT NULL DEFAULT 0;
