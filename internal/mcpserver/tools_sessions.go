package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/carryon-hub/carryon"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The arguments of the session tools; their JSON names are the contract.
type (
	listSessionsArgs struct {
		Status string `json:"status,omitempty" jsonschema:"only the sessions in this state"`
		Limit  int    `json:"limit,omitempty" jsonschema:"how many sessions at most (default 50)"`
		Cursor string `json:"cursor,omitempty" jsonschema:"the next_cursor of the previous page"`
	}
	getSessionArgs struct {
		SessionID string `json:"session_id" jsonschema:"the session's id (sess_...)"`
		Messages  *int   `json:"messages,omitempty" jsonschema:"how many of the last messages to include (default 20, 0 for none)"`
	}
	createSessionArgs struct {
		Title         string                `json:"title,omitempty" jsonschema:"a title for people"`
		WorkingMemory carryon.WorkingMemory `json:"working_memory,omitempty" jsonschema:"the initial working memory: goal, plan, next_action, notes and any free keys"`
		ExternalID    string                `json:"external_id,omitempty" jsonschema:"your own id for the session (printable text, at most 200 characters, unique among your sessions): a create with one you used before returns that session unchanged, so one call creates or finds it"`
		RequestID     string                `json:"request_id,omitempty" jsonschema:"an idempotency key: a retry with the same one returns the same session"`
	}
	messageArg struct {
		Role    string `json:"role" jsonschema:"who speaks"`
		Content string `json:"content" jsonschema:"the text"`
	}
	appendMessagesArgs struct {
		SessionID       string       `json:"session_id" jsonschema:"the session's id (sess_...)"`
		Messages        []messageArg `json:"messages" jsonschema:"the messages to append, in order"`
		ExpectedVersion *int64       `json:"expected_version,omitempty" jsonschema:"refuse the write unless the session is at this version"`
		RequestID       string       `json:"request_id,omitempty" jsonschema:"an idempotency key: a retry with the same one appends nothing twice"`
	}
	updateWorkingMemoryArgs struct {
		SessionID       string                `json:"session_id" jsonschema:"the session's id (sess_...)"`
		Patch           carryon.WorkingMemory `json:"patch" jsonschema:"a JSON merge patch (RFC 7396): members set keys, null members delete them"`
		ExpectedVersion *int64                `json:"expected_version,omitempty" jsonschema:"refuse the write unless the session is at this version"`
		RequestID       string                `json:"request_id,omitempty" jsonschema:"an idempotency key: a retry with the same one is answered from the first"`
	}
)

// The results of the session writes: the service's answer and whether it was a replay of an
// earlier call with the same request id.
type (
	sessionResult struct {
		*carryon.Session
		Replayed bool `json:"replayed"`
	}
	appendResult struct {
		*carryon.AppendResult
		Replayed bool `json:"replayed"`
	}
	workingMemoryResult struct {
		*carryon.WorkingMemoryState
		Replayed bool `json:"replayed"`
	}
)

func (s *server) addSessionTools(srv *mcp.Server) {
	addTool(s, srv, &mcp.Tool{
		Name:        "list_sessions",
		Description: "List your sessions, newest first, a page at a time. Each has its id (sess_...), title, status and version.",
		Annotations: hints("List sessions", true, true, false),
	}, func(sc *jsonschema.Schema) {
		sc.Properties["status"].Enum = []any{string(carryon.SessionActive), string(carryon.SessionClosed), string(carryon.SessionExpired)}
		bound(sc, "limit", 1, carryon.MaxMessageWindow)
	}, s.listSessions)

	addTool(s, srv, &mcp.Tool{
		Name: "get_session",
		Description: "Read a session to continue it: its state and version, its working memory (goal, plan, next_action, notes) " +
			"and its last messages. Pass the version as expected_version to the writes that follow.",
		Annotations: hints("Get a session", true, true, false),
	}, func(sc *jsonschema.Schema) { bound(sc, "messages", 0, carryon.MaxMessageWindow) }, s.getSession)

	addTool(s, srv, &mcp.Tool{
		Name:        "create_session",
		Description: "Create a session, optionally with a title and an initial working memory. Returns the session with its id (sess_...).",
		Annotations: hints("Create a session", false, false, false),
	}, nil, s.createSession)

	addTool(s, srv, &mcp.Tool{
		Name: "append_messages",
		Description: "Append messages to a session's history, in order. The history is append-only. " +
			"With request_id a retry appends nothing twice; with expected_version a stale writer is refused (version_conflict).",
		Annotations: hints("Append messages", false, false, false),
	}, func(sc *jsonschema.Schema) {
		items := sc.Properties["messages"]
		items.MinItems = carryon.Ptr(1)
		items.MaxItems = carryon.Ptr(carryon.MaxAppendMessages)
		items.Items.Properties["role"].Enum = []any{string(carryon.RoleUser), string(carryon.RoleAssistant), string(carryon.RoleSystem)}
	}, s.appendMessages)

	addTool(s, srv, &mcp.Tool{
		Name: "update_working_memory",
		Description: "Change a session's working memory with a JSON merge patch: {\"next_action\": \"...\"} sets a key, " +
			"{\"notes\": null} deletes one. Every revision is kept in the session's history.",
		// A merge patch applied twice leaves the document as once; keys it overwrites stay in the
		// stored revisions, so nothing is destroyed.
		Annotations: hints("Update the working memory", false, true, false),
	}, nil, s.updateWorkingMemory)

	addDeleteMessage(s, srv)
}

// bound sets the range of the integer property name.
func bound(sc *jsonschema.Schema, name string, lo, hi int) {
	p := sc.Properties[name]
	p.Minimum = carryon.Ptr(float64(lo))
	p.Maximum = carryon.Ptr(float64(hi))
}

func (s *server) listSessions(ctx context.Context, in listSessionsArgs) (any, error) {
	page, err := s.sessions.List(ctx, carryon.SessionFilter{Status: carryon.SessionStatus(in.Status), Limit: in.Limit, Cursor: in.Cursor})
	if err != nil {
		return nil, err
	}
	page.Items = nonNil(page.Items)
	return page, nil
}

// nonNil makes an empty list [] in JSON rather than null.
func nonNil[T any](items []T) []T {
	if items == nil {
		return []T{}
	}
	return items
}

func (s *server) getSession(ctx context.Context, in getSessionArgs) (any, error) {
	opt := carryon.GetOptions{}
	if in.Messages != nil {
		opt.Messages = *in.Messages
		if opt.Messages == 0 {
			opt.Messages = -1
		}
	}
	v, err := s.sessions.Get(ctx, in.SessionID, opt)
	if err != nil {
		return nil, err
	}
	v.Messages = nonNil(v.Messages)
	return v, nil
}

func (s *server) createSession(ctx context.Context, in createSessionArgs) (any, error) {
	ctx, rc := withReceipt(ctx)
	sess, err := s.sessions.Create(ctx, carryon.NewSession{Title: in.Title, WorkingMemory: in.WorkingMemory,
		ExternalID: in.ExternalID, WriteOptions: carryon.WriteOptions{RequestID: in.RequestID}})
	if err != nil {
		return nil, err
	}
	return sessionResult{Session: sess, Replayed: rc.Replayed}, nil
}

func (s *server) appendMessages(ctx context.Context, in appendMessagesArgs) (any, error) {
	if err := s.versioned(in.ExpectedVersion); err != nil {
		return nil, err
	}
	msgs := make([]carryon.NewMessage, len(in.Messages))
	for i, m := range in.Messages {
		msgs[i] = carryon.NewMessage{Role: carryon.Role(m.Role), Content: m.Content}
	}
	ctx, rc := withReceipt(ctx)
	res, err := s.sessions.AppendMessages(ctx, in.SessionID, carryon.AppendInput{Messages: msgs,
		WriteOptions: carryon.WriteOptions{ExpectedVersion: in.ExpectedVersion, RequestID: in.RequestID}})
	if err != nil {
		return nil, err
	}
	return appendResult{AppendResult: res, Replayed: rc.Replayed}, nil
}

func (s *server) updateWorkingMemory(ctx context.Context, in updateWorkingMemoryArgs) (any, error) {
	if err := s.versioned(in.ExpectedVersion); err != nil {
		return nil, err
	}
	if in.Patch == nil {
		return nil, carryon.Errorf(carryon.EINVALID, "patch must be a JSON object (a merge patch)")
	}
	patch, err := json.Marshal(in.Patch)
	if err != nil {
		return nil, carryon.Errorf(carryon.EINVALID, "patch: %v", err)
	}
	ctx, rc := withReceipt(ctx)
	st, err := s.sessions.PatchWorkingMemory(ctx, in.SessionID, carryon.WorkingMemoryPatch{Patch: patch,
		WriteOptions: carryon.WriteOptions{ExpectedVersion: in.ExpectedVersion, RequestID: in.RequestID}})
	if err != nil {
		return nil, err
	}
	return workingMemoryResult{WorkingMemoryState: st, Replayed: rc.Replayed}, nil
}
