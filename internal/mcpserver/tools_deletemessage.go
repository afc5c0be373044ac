package mcpserver

import (
	"context"

	"github.com/carryon-hub/carryon"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// deleteMessageArgs are delete_message's arguments.
type deleteMessageArgs struct {
	SessionID       string `json:"session_id" jsonschema:"the session's id (sess_...)"`
	Seq             int64  `json:"seq" jsonschema:"the message's seq (get_session lists them)"`
	ExpectedVersion *int64 `json:"expected_version,omitempty" jsonschema:"refuse the write unless the session is at this version"`
	RequestID       string `json:"request_id,omitempty" jsonschema:"an idempotency key: a retry with the same one is answered from the first"`
}

// addDeleteMessage registers delete_message: the route DELETE /v1/sessions/{id}/messages/{seq}
// as a tool, for a client that must take back what it wrote (a secret pasted by mistake).
func addDeleteMessage(s *server, srv *mcp.Server) {
	addTool(s, srv, &mcp.Tool{
		Name: "delete_message",
		Description: "Delete one message of a session by its seq: it is hidden from every later read and from the model's context, " +
			"and the session moves to its next version. A fork made before keeps it. A repeat without request_id is not_found.",
		// The message cannot be read back, and a second delete of it is refused.
		Annotations: hints("Delete a message", false, false, true),
	}, func(sc *jsonschema.Schema) { sc.Properties["seq"].Minimum = carryon.Ptr(float64(1)) }, s.deleteMessage)
}

func (s *server) deleteMessage(ctx context.Context, in deleteMessageArgs) (any, error) {
	if err := s.versioned(in.ExpectedVersion); err != nil {
		return nil, err
	}
	ctx, rc := withReceipt(ctx)
	sess, err := s.sessions.DeleteMessage(ctx, in.SessionID, in.Seq,
		carryon.WriteOptions{ExpectedVersion: in.ExpectedVersion, RequestID: in.RequestID})
	if err != nil {
		return nil, err
	}
	return sessionResult{Session: sess, Replayed: rc.Replayed}, nil
}
