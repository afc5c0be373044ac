package carryon

import (
	"context"
	"time"
)

// Limits bound one user's use of the server: the request rate (a token bucket: RequestsPerSecond
// refill, RequestBurst capacity), the requests in flight and the event streams open at once, the
// runs executing at once, and the bytes stored. A nil field means the server's default (the
// flags of `carryon serve`); 0 means no bound. An admin sets a user's fields
// (LimitService.SetLimits); the others keep the server's defaults.
type Limits struct {
	RequestsPerSecond *float64 `json:"requests_per_second,omitempty"`
	RequestBurst      *int64   `json:"request_burst,omitempty"`
	MaxRequests       *int64   `json:"max_requests_in_flight,omitempty"`
	MaxStreams        *int64   `json:"max_streams,omitempty"`
	MaxRuns           *int64   `json:"max_concurrent_runs,omitempty"`
	MaxStoredBytes    *int64   `json:"max_stored_bytes,omitempty"`
}

// Over returns o's fields where they are set and l's where they are not: a user's overrides (o)
// over the server's defaults (l).
func (l Limits) Over(o Limits) Limits {
	pick := func(a, b *int64) *int64 {
		if b != nil {
			return b
		}
		return a
	}
	out := Limits{
		MaxRequests:    pick(l.MaxRequests, o.MaxRequests),
		MaxStreams:     pick(l.MaxStreams, o.MaxStreams),
		MaxRuns:        pick(l.MaxRuns, o.MaxRuns),
		MaxStoredBytes: pick(l.MaxStoredBytes, o.MaxStoredBytes),
		RequestBurst:   pick(l.RequestBurst, o.RequestBurst),
	}
	out.RequestsPerSecond = l.RequestsPerSecond
	if o.RequestsPerSecond != nil {
		out.RequestsPerSecond = o.RequestsPerSecond
	}
	return out
}

// Validate refuses a negative bound and a rate that is not a finite number (EINVALID, naming
// the field).
func (l Limits) Validate() error {
	if r := l.RequestsPerSecond; r != nil && (*r < 0 || *r != *r || *r > 1e9) {
		return Errorf(EINVALID, "requests_per_second must be a number from 0 (no bound) to 1e9, not %v", *r)
	}
	for _, f := range []struct {
		name string
		v    *int64
	}{{"request_burst", l.RequestBurst}, {"max_requests_in_flight", l.MaxRequests}, {"max_streams", l.MaxStreams},
		{"max_concurrent_runs", l.MaxRuns}, {"max_stored_bytes", l.MaxStoredBytes}} {
		if f.v != nil && *f.v < 0 {
			return Errorf(EINVALID, "%s must be 0 (no bound) or more, not %d", f.name, *f.v)
		}
	}
	return nil
}

// Int returns *p, or 0 (no bound) when p is nil.
func Int(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// UserLimits is what GET /v1/users/{id}/limits shows: the limits an admin set for the user
// (Limits, only the fields set), the limits that apply (Effective: those over the server's
// defaults), and the user's use the server counts against them.
type UserLimits struct {
	UserID    string     `json:"user_id"`
	Limits    Limits     `json:"limits"`
	Effective Limits     `json:"effective"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
	// StoredBytes is the bytes of the user's messages, working memory and long-term memory, as
	// last counted (the count is refreshed every few seconds while the user writes).
	StoredBytes int64 `json:"stored_bytes"`
	// RunningRuns is how many of the user's runs execute now, on any instance.
	RunningRuns int64 `json:"running_runs"`
}

// LimitService reads and sets the limits of users. Both methods need an admin caller in the
// context.
type LimitService interface {
	// GetLimits returns a user's limits (by id or name). ENOTFOUND, EFORBIDDEN.
	GetLimits(ctx context.Context, user string) (*UserLimits, error)
	// SetLimits replaces the limits an admin set for a user (by id or name) with l: a field left
	// nil goes back to the server's default. EINVALID (a negative bound), ENOTFOUND, EFORBIDDEN.
	SetLimits(ctx context.Context, user string, l Limits) (*UserLimits, error)
}
