package carryon

import (
	"context"
	"fmt"
	"math"
	"time"
)

// BudgetAction is what a run does when a budget it runs under is spent (Budget.OnExceed).
type BudgetAction string

// Budget actions.
const (
	// BudgetPause stops the run at its next step boundary in waiting_approval (reason
	// budget_exceeded); raising the budget and approving continues the same run.
	BudgetPause BudgetAction = "pause"
	// BudgetFail ends the run failed.
	BudgetFail BudgetAction = "fail"
)

// Limits of a budget.
const (
	// MaxBudgetTokens bounds Budget.Tokens.
	MaxBudgetTokens = int64(1) << 50
	// MaxBudgetUSD bounds Budget.USD.
	MaxBudgetUSD = 1e9
)

// Budget limits what may be spent on model calls: tokens (input and output), money in USD
// (priced with the agents file's prices), or both; whichever is reached first stops runs. A nil
// limit is no limit.
type Budget struct {
	Tokens *int64   `json:"tokens,omitempty"`
	USD    *float64 `json:"usd,omitempty"`
	// OnExceed is pause (the default) or fail.
	OnExceed BudgetAction `json:"on_exceed,omitempty"`
}

// Check says whether b is a valid budget, named field in errors: limits not negative and within
// bounds, on_exceed pause or fail. EINVALID.
func (b *Budget) Check(field string) error {
	if b == nil {
		return nil
	}
	if b.Tokens != nil && (*b.Tokens < 0 || *b.Tokens > MaxBudgetTokens) {
		return Errorf(EINVALID, "%s.tokens must be a whole number from 0 to %d, not %d", field, MaxBudgetTokens, *b.Tokens)
	}
	if b.USD != nil && (math.IsNaN(*b.USD) || *b.USD < 0 || *b.USD > MaxBudgetUSD) {
		return Errorf(EINVALID, "%s.usd must be a number from 0 to %g, not %g", field, float64(MaxBudgetUSD), *b.USD)
	}
	switch b.OnExceed {
	case "", BudgetPause, BudgetFail:
	default:
		return Errorf(EINVALID, "%s.on_exceed must be pause or fail, not %q", field, b.OnExceed)
	}
	return nil
}

// Empty reports whether b limits nothing.
func (b *Budget) Empty() bool { return b == nil || b.Tokens == nil && b.USD == nil }

// Action is b's OnExceed, pause when unset.
func (b *Budget) Action() BudgetAction {
	if b == nil || b.OnExceed == "" {
		return BudgetPause
	}
	return b.OnExceed
}

// SpentBy reports whether s reaches a limit of b.
func (b *Budget) SpentBy(s Spend) bool {
	if b == nil {
		return false
	}
	return b.Tokens != nil && s.Tokens >= *b.Tokens || b.USD != nil && s.Cost.USD() >= *b.USD
}

// UserBudget is a user's budgets: one for each UTC day and one for each UTC month. An admin sets
// it (UserService.SetBudget).
type UserBudget struct {
	Day   *Budget `json:"day,omitempty"`
	Month *Budget `json:"month,omitempty"`
}

// Check says whether u is valid (Budget.Check of each). EINVALID.
func (u *UserBudget) Check() error {
	if u == nil {
		return nil
	}
	if err := u.Day.Check("day"); err != nil {
		return err
	}
	return u.Month.Check("month")
}

// NanoUSD is an amount of money in billionths of a US dollar: spend is counted in whole units so
// that sums are exact and the same on every driver.
type NanoUSD int64

// USD returns n in dollars.
func (n NanoUSD) USD() float64 { return float64(n) / 1e9 }

// Spend is what was spent on model calls: tokens (input and output) and their price (Cost,
// exact; USD, the same in dollars for the wire).
type Spend struct {
	Tokens int64   `json:"tokens"`
	Cost   NanoUSD `json:"-"`
	USD    float64 `json:"usd"`
}

// Add returns s plus o.
func (s Spend) Add(o Spend) Spend {
	s.Tokens += o.Tokens
	s.Cost += o.Cost
	s.USD = s.Cost.USD()
	return s
}

// ModelSpend is what was spent on one model in a period.
type ModelSpend struct {
	Model        string  `json:"model"`
	Calls        int64   `json:"calls"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CachedTokens int64   `json:"cached_tokens"`
	Cost         NanoUSD `json:"-"`
	USD          float64 `json:"usd"`
}

// Spend returns m's tokens and cost.
func (m ModelSpend) Spend() Spend {
	return Spend{Tokens: m.InputTokens + m.OutputTokens, Cost: m.Cost, USD: m.Cost.USD()}
}

// ModelCall is one model call's use, recorded in the transaction of the step that stores the
// call's answer.
type ModelCall struct {
	Model        string
	InputTokens  int64
	OutputTokens int64
	CachedTokens int64
	Cost         NanoUSD
}

// UsagePeriod is a user's spend in one UTC day or month.
type UsagePeriod struct {
	// Period is the day (2006-01-02) or the month (2006-01), UTC.
	Period string       `json:"period"`
	Tokens int64        `json:"tokens"`
	USD    float64      `json:"usd"`
	Models []ModelSpend `json:"models"`
}

// NewUsagePeriod sums the spend of a period's models.
func NewUsagePeriod(period string, models []ModelSpend) UsagePeriod {
	p := UsagePeriod{Period: period, Models: models}
	var s Spend
	for _, m := range models {
		s = s.Add(m.Spend())
	}
	if p.Models == nil {
		p.Models = []ModelSpend{}
	}
	p.Tokens, p.USD = s.Tokens, s.Cost.USD()
	return p
}

// UserUsage is what GET /v1/me/usage answers: the caller's spend today and this month, per UTC
// day of the days asked for (every day, zeros included, oldest first), and the budgets an admin
// set.
type UserUsage struct {
	UserID string      `json:"user_id"`
	Today  UsagePeriod `json:"today"`
	Month  UsagePeriod `json:"month"`
	Days   []DaySpend  `json:"days"`
	Budget UserBudget  `json:"budget"`
}

// Budget scopes (BudgetStop.Scope).
const (
	BudgetScopeSession   = "session"
	BudgetScopeUserDay   = "user_day"
	BudgetScopeUserMonth = "user_month"
)

// ReasonBudgetExceeded is the reason of a run that waits because a budget is spent.
const ReasonBudgetExceeded = "budget_exceeded"

// BudgetStop says why a run stopped at a budget: which budget (session, user_day, user_month),
// its period, the limit and what was spent when the run stopped.
type BudgetStop struct {
	Reason   string       `json:"reason"`
	Scope    string       `json:"scope"`
	Period   string       `json:"period,omitempty"`
	Spent    Spend        `json:"spent"`
	Limit    Budget       `json:"limit"`
	OnExceed BudgetAction `json:"on_exceed"`
}

// Error says what was spent against which limit.
func (b *BudgetStop) Error() string {
	what := "the session's budget"
	switch b.Scope {
	case BudgetScopeUserDay:
		what = "the user's budget for " + b.Period
	case BudgetScopeUserMonth:
		what = "the user's budget for the month " + b.Period
	}
	lim := ""
	if b.Limit.Tokens != nil {
		lim = fmt.Sprintf("%d tokens", *b.Limit.Tokens)
	}
	if b.Limit.USD != nil {
		if lim != "" {
			lim += " or "
		}
		lim += fmt.Sprintf("%g USD", *b.Limit.USD)
	}
	return fmt.Sprintf("budget exceeded: %s (%s) is spent: %d tokens, %g USD used", what, lim, b.Spent.Tokens, b.Spent.Cost.USD())
}

// GoOn says, after b's Error, how a run stopped at b goes on: raise the budget, then approve the
// run with no action (docs/API.md, "Budgets"). Every door says it so.
func (b *BudgetStop) GoOn(runID string) string {
	raise := "an admin raises the user's budget (PUT /v1/users/{id}/budget)"
	if b.Scope == BudgetScopeSession {
		raise = "raise the session's budget (PATCH /v1/sessions/{id} with budget)"
	}
	if b.OnExceed == BudgetFail {
		return "the run failed; " + raise + " before the next run"
	}
	return raise + ", then approve run " + runID + " with no action_id (POST /v1/runs/" + runID + "/approve, or carryon runs approve " + runID + ")"
}

// Day is the UTC day of t (2006-01-02), as budgets and usage name it.
func Day(t time.Time) string { return t.UTC().Format("2006-01-02") }

// Month is the UTC month of t (2006-01), as budgets and usage name it.
func Month(t time.Time) string { return t.UTC().Format("2006-01") }

// BudgetService reads and sets budgets and spend. Budgets of sessions go with the session
// (NewSession.Budget, SessionUpdate.Budget); a user's budget is set by an admin.
type BudgetService interface {
	// Usage returns the caller's spend today and this month, per model, per day of the days o
	// asks for, and its budgets. EINVALID.
	Usage(ctx context.Context, o UsageOptions) (*UserUsage, error)
	// UserUsage is Usage of a user given by id or name. Admins only: EFORBIDDEN; ENOTFOUND,
	// EINVALID.
	UserUsage(ctx context.Context, userID string, o UsageOptions) (*UserUsage, error)
	// UserBudget returns a user's budget (by id or name). Admins only: EFORBIDDEN; ENOTFOUND.
	UserBudget(ctx context.Context, userID string) (*UserBudget, error)
	// SetUserBudget replaces a user's budget (a nil day or month is none). A repeat with the same
	// request id answers the first answer. Admins only: EFORBIDDEN; ENOTFOUND, EINVALID,
	// EKEYREUSED.
	SetUserBudget(ctx context.Context, userID string, in UserBudgetInput) (*UserBudget, error)
}

// UserBudgetInput is the input of BudgetService.SetUserBudget.
type UserBudgetInput struct {
	UserBudget
	RetryOptions
}

// Price is what a model costs, in USD per million tokens (the agents file's prices): input
// tokens, output tokens, and cached input tokens (the part of the input a provider read from its
// prompt cache).
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	Cached float64 `json:"cached"`
}

// Cost is the price of a call of in input tokens (cached of them from the cache) and out output
// tokens, rounded to the nearest nano-dollar.
func (p Price) Cost(in, out, cached int64) NanoUSD {
	cached = min(max(cached, 0), in)
	// USD per million tokens is 1,000 nano-dollars per token.
	return NanoUSD(math.Round(float64(in-cached)*p.Input*1000 + float64(cached)*p.Cached*1000 + float64(out)*p.Output*1000))
}
