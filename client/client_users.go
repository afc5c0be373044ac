package client

import (
	"context"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/wire"
)

// Authenticate returns the user the secret key belongs to (GET /v1/me with that key).
func (c *Client) Authenticate(ctx context.Context, secret string) (*carryon.User, error) {
	if secret == "" {
		return nil, carryon.Errorf(carryon.EUNAUTHORIZED, "no API key")
	}
	var out carryon.User
	if err := c.do(ctx, call{method: "GET", path: "/v1/me", key: secret}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Me returns the user of the client's key (GET /v1/me).
func (c *Client) Me(ctx context.Context) (*carryon.User, error) {
	var out carryon.User
	if err := c.do(ctx, call{method: "GET", path: "/v1/me"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateUser makes a user and its first key; the secret is returned once (POST /v1/users).
func (c *Client) CreateUser(ctx context.Context, in carryon.NewUser) (*carryon.User, string, error) {
	var out wire.CreateUserResponse
	if err := c.do(ctx, call{method: "POST", path: "/v1/users", body: in}, &out); err != nil {
		return nil, "", err
	}
	return out.User, out.Key, nil
}

// ListUsers lists every user by name (GET /v1/users, every page).
func (c *Client) ListUsers(ctx context.Context) ([]*carryon.User, error) {
	return listAll[*carryon.User](ctx, c, "/v1/users")
}

// GetUser returns a user by id or name (GET /v1/users/{id}).
func (c *Client) GetUser(ctx context.Context, user string) (*carryon.User, error) {
	var out carryon.User
	if err := c.do(ctx, call{method: "GET", path: "/v1/users/" + escape(user)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateKey makes another key for a user given by id or name (POST /v1/users/{id}/keys).
func (c *Client) CreateKey(ctx context.Context, user string) (*carryon.APIKey, string, error) {
	var out wire.CreateKeyResponse
	if err := c.do(ctx, call{method: "POST", path: "/v1/users/" + escape(user) + "/keys"}, &out); err != nil {
		return nil, "", err
	}
	return out.Key, out.Secret, nil
}

// ListKeys lists a user's keys, oldest first (GET /v1/users/{id}/keys, every page).
func (c *Client) ListKeys(ctx context.Context, user string) ([]*carryon.APIKey, error) {
	return listAll[*carryon.APIKey](ctx, c, "/v1/users/"+escape(user)+"/keys")
}

// RevokeKey revokes a key by id (DELETE /v1/keys/{id}); the request id travels as
// Idempotency-Key.
func (c *Client) RevokeKey(ctx context.Context, keyID string, opt carryon.RetryOptions) error {
	return c.do(ctx, call{method: "DELETE", path: "/v1/keys/" + escape(keyID), requestID: opt.RequestID}, nil)
}

// ForgetUser forgets a user given by id or name and everything of theirs (DELETE /v1/users/{id}).
func (c *Client) ForgetUser(ctx context.Context, user string) (*carryon.ForgetReceipt, error) {
	var out carryon.ForgetReceipt
	if err := c.do(ctx, call{method: "DELETE", path: "/v1/users/" + escape(user)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Settings returns the caller's own settings (GET /v1/me/settings).
func (c *Client) Settings(ctx context.Context) (*carryon.UserSettings, error) {
	var out carryon.UserSettings
	if err := c.do(ctx, call{method: "GET", path: "/v1/me/settings"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateSettings changes the caller's own settings (PATCH /v1/me/settings).
func (c *Client) UpdateSettings(ctx context.Context, in carryon.UserSettingsPatch) (*carryon.UserSettings, error) {
	var out carryon.UserSettings
	if err := c.do(ctx, call{method: "PATCH", path: "/v1/me/settings", body: in}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
