package carryon

import (
	"context"
	"time"
)

// Usage windows (UsageOptions.Days).
const (
	// DefaultUsageDays is how many UTC days a usage answer has when none is asked for.
	DefaultUsageDays = 30
	// MaxUsageDays bounds UsageOptions.Days.
	MaxUsageDays = 366
)

// UsageOptions chooses the days of a usage answer: the last Days UTC days, today included
// (DefaultUsageDays when 0; 1 to MaxUsageDays).
type UsageOptions struct {
	Days int
}

// Check says whether o is valid, Days 0 (the default) or 1 to MaxUsageDays. EINVALID.
func (o UsageOptions) Check() error {
	if o.Days < 0 || o.Days > MaxUsageDays {
		return Errorf(EINVALID, "days must be a whole number from 1 to %d, not %d", MaxUsageDays, o.Days)
	}
	return nil
}

// Window returns the first and the last day (2006-01-02, UTC) of the days o asks for, ending on
// now's day.
func (o UsageOptions) Window(now time.Time) (from, to string) {
	n := o.Days
	if n == 0 {
		n = DefaultUsageDays
	}
	now = now.UTC()
	return Day(now.AddDate(0, 0, 1-n)), Day(now)
}

// DaySpend is what was spent on model calls in one UTC day: Tokens is input plus output.
type DaySpend struct {
	// Date is the day, 2006-01-02 UTC.
	Date         string  `json:"date"`
	Tokens       int64   `json:"tokens"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CachedTokens int64   `json:"cached_tokens"`
	Calls        int64   `json:"calls"`
	Cost         NanoUSD `json:"-"`
	USD          float64 `json:"usd"`
}

// EveryDay returns the days from to to (2006-01-02, inclusive, oldest first), each with its
// spend in spent (by Date) or zero.
func EveryDay(from, to string, spent []DaySpend) []DaySpend {
	by := make(map[string]DaySpend, len(spent))
	for _, d := range spent {
		by[d.Date] = d
	}
	start, err1 := time.Parse(time.DateOnly, from)
	end, err2 := time.Parse(time.DateOnly, to)
	if err1 != nil || err2 != nil {
		return []DaySpend{}
	}
	out := []DaySpend{}
	for d := start; !d.After(end); d = d.AddDate(0, 0, 1) {
		day, ok := by[Day(d)]
		if !ok {
			day = DaySpend{Date: Day(d)}
		}
		day.Tokens = day.InputTokens + day.OutputTokens
		day.USD = day.Cost.USD()
		out = append(out, day)
	}
	return out
}

// SessionUsage is what GET /v1/sessions/{id}/usage answers: what the session's runs spent in all
// (Spend) and per model, per UTC day of the days asked for, and the session's budget.
type SessionUsage struct {
	SessionID string       `json:"session_id"`
	Spend     Spend        `json:"spend"`
	Models    []ModelSpend `json:"models"`
	Days      []DaySpend   `json:"days"`
	Budget    *Budget      `json:"budget,omitempty"`
}

// UsageService answers spend per day: a session's (its owner's) and a user's (an admin's view;
// a user's own is BudgetService.Usage).
type UsageService interface {
	// SessionUsage returns what the caller's session spent, per model and per day, and its
	// budget. ENOTFOUND, EINVALID.
	SessionUsage(ctx context.Context, sessionID string, o UsageOptions) (*SessionUsage, error)
}
