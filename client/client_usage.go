package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/carryon-hub/carryon"
)

var (
	_ carryon.BudgetService = (*Client)(nil)
	_ carryon.UsageService  = (*Client)(nil)
)

// usageQuery is o as the usage routes' query: days when set, else the server's default.
func usageQuery(o carryon.UsageOptions) url.Values {
	if o.Days == 0 {
		return nil
	}
	return url.Values{"days": {strconv.Itoa(o.Days)}}
}

// Usage returns the caller's spend today and this month, per model, per day of the days o asks
// for, and its budgets (GET /v1/me/usage).
func (c *Client) Usage(ctx context.Context, o carryon.UsageOptions) (*carryon.UserUsage, error) {
	var out carryon.UserUsage
	if err := c.do(ctx, call{method: "GET", path: "/v1/me/usage", query: usageQuery(o)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UserUsage returns a user's usage, by id or name (GET /v1/users/{id}/usage; admins only).
func (c *Client) UserUsage(ctx context.Context, user string, o carryon.UsageOptions) (*carryon.UserUsage, error) {
	var out carryon.UserUsage
	if err := c.do(ctx, call{method: "GET", path: "/v1/users/" + escape(user) + "/usage", query: usageQuery(o)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SessionUsage returns what a session's runs spent, in all, per model and per day of the days o
// asks for, and the session's budget (GET /v1/sessions/{id}/usage).
func (c *Client) SessionUsage(ctx context.Context, id string, o carryon.UsageOptions) (*carryon.SessionUsage, error) {
	var out carryon.SessionUsage
	if err := c.do(ctx, call{method: "GET", path: "/v1/sessions/" + escape(id) + "/usage", query: usageQuery(o)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UserBudget returns a user's budgets, by id or name (GET /v1/users/{id}/budget; admins only).
func (c *Client) UserBudget(ctx context.Context, user string) (*carryon.UserBudget, error) {
	var out carryon.UserBudget
	if err := c.do(ctx, call{method: "GET", path: "/v1/users/" + escape(user) + "/budget"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetUserBudget replaces a user's budgets, by id or name (PUT /v1/users/{id}/budget; admins
// only); the request id travels as Idempotency-Key.
func (c *Client) SetUserBudget(ctx context.Context, user string, in carryon.UserBudgetInput) (*carryon.UserBudget, error) {
	var out carryon.UserBudget
	rid := in.RequestID
	in.RequestID = ""
	if err := c.do(ctx, call{method: "PUT", path: "/v1/users/" + escape(user) + "/budget", body: in, requestID: rid}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
