package mcpserver

import (
	"context"

	"github.com/carryon-hub/carryon"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CompactFunc stores a compaction of a session (POST /v1/sessions/{id}/compact).
type CompactFunc func(ctx context.Context, sessionID string, in carryon.CompactInput) (*carryon.Compaction, error)

// compactArgs are compact_session's arguments.
type compactArgs struct {
	SessionID       string `json:"session_id" jsonschema:"the session's id (sess_...)"`
	KeepLast        int    `json:"keep_last,omitempty" jsonschema:"how many of the newest messages stay out of the summary (default 0)"`
	Instructions    string `json:"instructions,omitempty" jsonschema:"what the summary must keep, added to the summarizer's prompt"`
	ExpectedVersion *int64 `json:"expected_version,omitempty" jsonschema:"refuse the write unless the session is at this version"`
	RequestID       string `json:"request_id,omitempty" jsonschema:"an idempotency key: a retry with the same one is answered from the first"`
}

// compactResult is compact_session's answer: the compaction and whether it was a replay.
type compactResult struct {
	*carryon.Compaction
	Replayed bool `json:"replayed,omitempty"`
}

// addCompact registers compact_session, when the server has a summarizer: the route
// POST /v1/sessions/{id}/compact as a tool, for a client that wants a manual /compact.
func addCompact(s *server, srv *mcp.Server) {
	addTool(s, srv, &mcp.Tool{
		Name: "compact_session",
		Description: "Compact a session: the session's model summarizes its history except the last keep_last messages, " +
			"and the model's context sends the summary in their place from then on. The history stays (still listed and forkable); " +
			"the session moves to its next version. Refused with session_busy while a run is active.",
		// A second call summarizes again (a new compaction); nothing is lost.
		Annotations: hints("Compact a session", false, false, false),
	}, func(sc *jsonschema.Schema) { sc.Properties["keep_last"].Minimum = carryon.Ptr(float64(0)) }, s.compactSession)
}

func (s *server) compactSession(ctx context.Context, in compactArgs) (any, error) {
	if err := s.versioned(in.ExpectedVersion); err != nil {
		return nil, err
	}
	ctx, rc := withReceipt(ctx)
	c, err := s.compact(ctx, in.SessionID, carryon.CompactInput{KeepLast: in.KeepLast, Instructions: in.Instructions,
		WriteOptions: carryon.WriteOptions{ExpectedVersion: in.ExpectedVersion, RequestID: in.RequestID}})
	if err != nil {
		return nil, err
	}
	return compactResult{Compaction: c, Replayed: rc.Replayed}, nil
}
