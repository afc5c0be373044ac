package mcpserver

import (
	"context"

	"github.com/carryon-hub/carryon"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ExtractFunc learns facts from a session (POST /v1/sessions/{id}/extract).
type ExtractFunc func(ctx context.Context, sessionID string) (*carryon.Extraction, error)

// extractArgs are learn_facts' arguments.
type extractArgs struct {
	SessionID string `json:"session_id" jsonschema:"the session's id (sess_...)"`
}

// addExtract registers learn_facts, when the server can learn facts: the route
// POST /v1/sessions/{id}/extract as a tool.
func addExtract(s *server, srv *mcp.Server) {
	addTool(s, srv, &mcp.Tool{
		Name: "learn_facts",
		Description: "Learn durable facts about the user from a session's turns since the last time (the session's agent profile " +
			"must have memory_extraction): they are written to the user's long-term memory, consolidated into near duplicates. " +
			"Once per turn: a second call with no new turns learns nothing and calls no model.",
		// A repeat learns only newer turns: nothing twice.
		Annotations: hints("Learn facts from a session", false, true, false),
	}, nil, func(ctx context.Context, in extractArgs) (any, error) {
		return s.extract(ctx, in.SessionID)
	})
}
