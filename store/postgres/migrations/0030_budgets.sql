-- Budgets and spend (docs/API.md, "Budgets"). A session's budget lives beside its session and goes
-- with it; a user's (one for each UTC day, one for each UTC month) beside the user. budget is the
-- JSON of carryon.Budget / carryon.UserBudget.
CREATE TABLE session_budgets (
	session_id TEXT COLLATE "C" PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
	owner_id   TEXT COLLATE "C" NOT NULL,
	budget     TEXT NOT NULL,
	updated_at BIGINT NOT NULL
);
CREATE TABLE user_budgets (
	user_id    TEXT COLLATE "C" PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
	budget     TEXT NOT NULL,
	updated_at BIGINT NOT NULL
);
-- Spend: counters per model, added to in the transaction of the step that stores a model call's
-- answer. A session's counters go with the session; a user's are per UTC period ('2026-12-06' for
-- a day, '2026-12' for a month) and stay when a session is deleted (what was spent was spent).
-- cost is in billionths of a US dollar (carryon.NanoUSD).
CREATE TABLE session_spend (
	session_id    TEXT COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	model         TEXT COLLATE "C" NOT NULL,
	owner_id      TEXT COLLATE "C" NOT NULL,
	calls         BIGINT NOT NULL DEFAULT 0,
	input_tokens  BIGINT NOT NULL DEFAULT 0,
	output_tokens BIGINT NOT NULL DEFAULT 0,
	cached_tokens BIGINT NOT NULL DEFAULT 0,
	cost          BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (session_id, model)
);
CREATE TABLE user_spend (
	user_id       TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	period        TEXT COLLATE "C" NOT NULL,
	model         TEXT COLLATE "C" NOT NULL,
	calls         BIGINT NOT NULL DEFAULT 0,
	input_tokens  BIGINT NOT NULL DEFAULT 0,
	output_tokens BIGINT NOT NULL DEFAULT 0,
	cached_tokens BIGINT NOT NULL DEFAULT 0,
	cost          BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (user_id, period, model)
);
-- Why a run waits or stopped at a budget: the JSON of carryon.BudgetStop, '' otherwise.
ALTER TABLE runs ADD COLUMN budget_stop TEXT NOT NULL DEFAULT '';
