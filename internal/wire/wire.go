package wire

import (
	"encoding/json"

	"github.com/carryon-hub/carryon"
)

// AppendRequest is the body of POST /v1/sessions/{id}/messages. The run a message belongs to is
// never taken from a client: runs write through the services directly.
type AppendRequest struct {
	Messages []carryon.NewMessage `json:"messages"`
	// WorkingMemoryPatch is a JSON Merge Patch of the working memory applied in the same write.
	WorkingMemoryPatch json.RawMessage `json:"working_memory_patch,omitempty"`
	carryon.WriteOptions
}

// WorkingMemoryPatchRequest is the application/json body of PATCH /v1/sessions/{id}/memory. A body sent
// as application/merge-patch+json is the patch itself (versions then come from If-Match).
type WorkingMemoryPatchRequest struct {
	// Patch is a JSON Merge Patch (RFC 7396): an object whose null members delete keys.
	Patch json.RawMessage `json:"patch"`
	carryon.WriteOptions
}

// CreateUserResponse answers POST /v1/users: the new user and the secret of its first key, shown
// only this once.
type CreateUserResponse struct {
	User *carryon.User `json:"user"`
	Key  string        `json:"key"`
}

// CreateKeyResponse answers POST /v1/users/{id}/keys: the new key and its secret, shown only this
// once.
type CreateKeyResponse struct {
	Key    *carryon.APIKey `json:"key"`
	Secret string          `json:"secret"`
}

// UserList answers GET /v1/users: a page of users by name.
type UserList struct {
	Items      []*carryon.User `json:"items"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

// KeyList answers GET /v1/users/{id}/keys: a page of a user's keys, oldest first.
type KeyList struct {
	Items      []*carryon.APIKey `json:"items"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

// Health answers /healthz and /readyz.
type Health struct {
	Status string `json:"status"`
}

// DoorHeader is the request header with which a bridge that speaks the native API on behalf of
// another front door says so: the Go client sends "mcp" for a call whose context names the MCP
// door (carryon mcp over stdio), and a run the request starts records that door (Run.Door).
const DoorHeader = "Carryon-Door"
