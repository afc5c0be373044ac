package carryon

import (
	"context"
	"time"
)

// User is a person or program that owns sessions. Identity comes only from an API key.
type User struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Admin     bool      `json:"admin"`
	CreatedAt time.Time `json:"created_at"`
}

// UserSettings are what a user decides for themselves (GET /v1/me/settings).
type UserSettings struct {
	// LearnFacts lets the agent profiles with memory_extraction learn facts about the user from
	// their sessions, on their own and when asked (default true).
	LearnFacts bool `json:"learn_facts"`
}

// DefaultUserSettings are the settings of a user who changed none.
var DefaultUserSettings = UserSettings{LearnFacts: true}

// UserSettingsPatch changes some of the caller's settings (PATCH /v1/me/settings): the fields
// given, the others as they are.
type UserSettingsPatch struct {
	LearnFacts *bool `json:"learn_facts,omitempty"`
}

// APIKey is a credential of a user. Only a SHA-256 of the secret is stored; the secret itself is
// shown once, when the key is made.
type APIKey struct {
	ID     string `json:"id"`
	UserID string `json:"user_id"`
	// Prefix is the first characters of the secret, enough to recognise a key in a listing.
	Prefix     string     `json:"prefix"`
	Hash       string     `json:"-"`
	CreatedAt  time.Time  `json:"created_at"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
}

// NewUser is the input of UserService.CreateUser.
type NewUser struct {
	Name  string `json:"name"`
	Admin bool   `json:"admin,omitempty"`
}

// UserService manages users and their keys. Every method but Authenticate needs an admin caller in
// the context (or a trusted context from NewTrustedContext, which the CLI uses on the local store).
type UserService interface {
	// Authenticate returns the user a secret key belongs to. EUNAUTHORIZED for an unknown or revoked key.
	Authenticate(ctx context.Context, secret string) (*User, error)
	// CreateUser makes a user and a first key; it returns the secret once. EINVALID, ECONFLICT (name taken), EFORBIDDEN.
	CreateUser(ctx context.Context, in NewUser) (*User, string, error)
	// ListUsers lists every user. EFORBIDDEN.
	ListUsers(ctx context.Context) ([]*User, error)
	// GetUser returns a user by id or name. ENOTFOUND, EFORBIDDEN.
	GetUser(ctx context.Context, user string) (*User, error)
	// CreateKey makes another key for a user (by id or name) and returns it with its secret. ENOTFOUND, EFORBIDDEN.
	CreateKey(ctx context.Context, user string) (*APIKey, string, error)
	// ListKeys lists a user's keys (by id or name). ENOTFOUND, EFORBIDDEN.
	ListKeys(ctx context.Context, user string) ([]*APIKey, error)
	// RevokeKey revokes a key by id; later requests with it get EUNAUTHORIZED. A repeat with the
	// same request id succeeds again. ENOTFOUND, EFORBIDDEN, EKEYREUSED.
	RevokeKey(ctx context.Context, keyID string, opt RetryOptions) error
	// ForgetUser deletes a user (by id or name) and everything of theirs: sessions with every row
	// in them, workspaces, long-term memory, request ids and keys, in bounded steps; the user is
	// invisible from the first step on. Given the id of a user whose forgetting was cut off, it
	// continues it. It returns what was deleted. ENOTFOUND, EINVALID (the caller itself),
	// EFORBIDDEN.
	ForgetUser(ctx context.Context, user string) (*ForgetReceipt, error)
	// Settings returns the caller's own settings. EUNAUTHORIZED.
	Settings(ctx context.Context) (*UserSettings, error)
	// UpdateSettings changes the caller's own settings and returns them all. EUNAUTHORIZED.
	UpdateSettings(ctx context.Context, in UserSettingsPatch) (*UserSettings, error)
}

// ForgetReceipt is the account of forgetting a user: how many of each kind of thing were deleted.
type ForgetReceipt struct {
	UserID     string       `json:"user_id"`
	StartedAt  time.Time    `json:"started_at"`
	FinishedAt time.Time    `json:"finished_at"`
	Deleted    ForgetCounts `json:"deleted"`
}

// ForgetCounts counts deleted things by kind.
type ForgetCounts struct {
	Sessions         int64 `json:"sessions"`
	Messages         int64 `json:"messages"`
	MessageDeletions int64 `json:"message_deletions"`
	MemoryRevisions  int64 `json:"memory_revisions"`
	Runs             int64 `json:"runs"`
	Actions          int64 `json:"actions"`
	Events           int64 `json:"events"`
	Workspaces       int64 `json:"workspaces"`
	LongTermItems    int64 `json:"long_term_items"`
	RequestIDs       int64 `json:"request_ids"`
	Keys             int64 `json:"keys"`
}

// Add adds o's counts to c.
func (c *ForgetCounts) Add(o ForgetCounts) {
	c.Sessions += o.Sessions
	c.Messages += o.Messages
	c.MessageDeletions += o.MessageDeletions
	c.MemoryRevisions += o.MemoryRevisions
	c.Runs += o.Runs
	c.Actions += o.Actions
	c.Events += o.Events
	c.Workspaces += o.Workspaces
	c.LongTermItems += o.LongTermItems
	c.RequestIDs += o.RequestIDs
	c.Keys += o.Keys
}

// Total is the sum of the counts.
func (c ForgetCounts) Total() int64 {
	return c.Sessions + c.Messages + c.MessageDeletions + c.MemoryRevisions + c.Runs + c.Actions + c.Events +
		c.Workspaces + c.LongTermItems + c.RequestIDs + c.Keys
}

type userKey struct{}
type trustedKey struct{}

// NewContextWithUser returns a context that carries the authenticated user.
func NewContextWithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFromContext returns the authenticated user in ctx, or nil.
func UserFromContext(ctx context.Context) *User {
	u, _ := ctx.Value(userKey{}).(*User)
	return u
}

// UserIDFromContext returns the id of the authenticated user in ctx, or "".
func UserIDFromContext(ctx context.Context) string {
	if u := UserFromContext(ctx); u != nil {
		return u.ID
	}
	return ""
}

// NewTrustedContext marks ctx as coming from an operator with direct access to the store (the CLI
// on the data directory); admin checks pass for it. Never derive it from a network request.
func NewTrustedContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, trustedKey{}, true)
}

// IsAdminContext reports whether ctx carries an admin user or is trusted.
func IsAdminContext(ctx context.Context) bool {
	if t, _ := ctx.Value(trustedKey{}).(bool); t {
		return true
	}
	u := UserFromContext(ctx)
	return u != nil && u.Admin
}
