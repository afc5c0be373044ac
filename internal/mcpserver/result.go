package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/jsongate"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addTool registers a tool whose arguments decode into In and whose call returns the value of a
// result (a JSON object) or an error. edit, when given, refines the input schema inferred from
// In (enums, bounds). The arguments are checked against the schema here, not by the SDK, so that
// bad arguments are a tool error with carryon's code like any other refusal. The result goes out
// as structured content with the same JSON as text; an error as a tool error (see toolError).
func addTool[In any](s *server, srv *mcp.Server, t *mcp.Tool, edit func(*jsonschema.Schema), call func(ctx context.Context, in In) (any, error)) {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic("mcpserver: the input schema of " + t.Name + ": " + err.Error())
	}
	for _, p := range schema.Properties {
		noNull(p)
	}
	if edit != nil {
		edit(schema)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		panic("mcpserver: the input schema of " + t.Name + ": " + err.Error())
	}
	t.InputSchema = schema
	srv.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		in, err := decodeArgs[In](t.Name, req.Params.Arguments, resolved)
		if err != nil {
			return s.toolError(ctx, t.Name, err), nil
		}
		ctx, rc := withReceipt(caller(ctx, req.Extra)) // the tool's writes fill it in
		if s.quota != nil && growing[t.Name] {
			if err := s.quota(ctx); err != nil {
				return s.toolError(ctx, t.Name, err), nil
			}
		}
		out, err := call(ctx, in)
		if s.writes != nil && !t.Annotations.ReadOnlyHint {
			s.writes.Write("mcp", rc.Replayed, carryon.ErrorCode(err))
		}
		if err != nil {
			return s.toolError(ctx, t.Name, err), nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			return s.toolError(ctx, t.Name, err), nil
		}
		return &mcp.CallToolResult{StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
	})
}

// growing are the tools that store more: past the caller's quota (Config.Quota) they are
// refused; every other tool (the reads, the deletes, pausing) still works.
var growing = map[string]bool{"create_session": true, "append_messages": true, "update_working_memory": true, "remember": true,
	"start_run": true, "compact_session": true, "create_schedule": true, "run_schedule": true, "create_webhook": true}

// decodeArgs checks a call's arguments against the input gate (internal/jsongate: exact names,
// each once in an object, no NUL, no lone surrogate, numbers within a 64-bit float, at most
// jsongate.MaxDepth deep) and the tool's input schema, and decodes them.
func decodeArgs[In any](tool string, args json.RawMessage, schema *jsonschema.Resolved) (In, error) {
	var in In
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if err := jsongate.CheckValue(args); err != nil {
		return in, carryon.Errorf(carryon.EINVALID, "the arguments of %s: %s", tool, argsMessage(err))
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return in, carryon.Errorf(carryon.EINVALID, "the arguments of %s are not JSON: %v", tool, err)
	}
	if err := schema.Validate(v); err != nil {
		return in, carryon.Errorf(carryon.EINVALID, "the arguments of %s do not fit its input schema: %v", tool, err)
	}
	// Exact names, and numbers inside free JSON (a remembered value) exactly as written, not
	// rounded through float64.
	if err := jsongate.Decode(args, &in); err != nil {
		return in, carryon.Errorf(carryon.EINVALID, "the arguments of %s: %s", tool, argsMessage(err))
	}
	return in, nil
}

// argsMessage words a refusal of the gate for arguments rather than a request body.
func argsMessage(err error) string {
	return strings.ReplaceAll(err.Error(), "the request body", "the arguments")
}

// noNull makes a property the schema inference types as "T or null" (a pointer, a slice, a map)
// plain T: an optional argument is one left out, and null is not a value any of them takes.
func noNull(p *jsonschema.Schema) {
	if len(p.Types) == 2 && slices.Contains(p.Types, "null") {
		p.Type = p.Types[0]
		if p.Type == "null" {
			p.Type = p.Types[1]
		}
		p.Types = nil
	}
}

// errorBody is the structured content of a tool error.
type errorBody struct {
	Error errorInfo `json:"error"`
}

// errorInfo is a carryon error as a tool error carries it: the code and the sentence, and the
// facts a client needs to recover when there are some.
type errorInfo struct {
	Code           string `json:"code"`
	Message        string `json:"message"`
	CurrentVersion int64  `json:"current_version,omitempty"`
	ActiveRunID    string `json:"active_run_id,omitempty"`
}

// errorOf is err as a tool or protocol error states it. An error that is not a carryon error is
// internal: it is logged, and its text is shown only when the server is told to.
func (s *server) errorOf(ctx context.Context, op string, err error) errorInfo {
	e, ok := carryon.AsError(err)
	if !ok {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return errorInfo{Code: carryon.EUNAVAILABLE, Message: "the request was cancelled or timed out before it finished: " + err.Error()}
		}
		if ne, isNet := errors.AsType[net.Error](err); isNet && s.showErrs {
			return errorInfo{Code: carryon.EUNAVAILABLE, Message: "the carryon server cannot be reached: " + ne.Error()}
		}
		s.logger.ErrorContext(ctx, "internal error", slog.String("mcp", op), slog.Any("err", err))
		msg := carryon.ErrorMessage(err)
		if s.showErrs {
			msg = err.Error()
		}
		return errorInfo{Code: carryon.EINTERNAL, Message: msg}
	}
	return errorInfo{Code: e.Code, Message: e.Message, CurrentVersion: e.CurrentVersion, ActiveRunID: e.ActiveRunID}
}

// toolError is err as the result of a tool call: isError, with {"error": {...}} as structured
// content and as text.
func (s *server) toolError(ctx context.Context, tool string, err error) *mcp.CallToolResult {
	body := errorBody{Error: s.errorOf(ctx, tool, err)}
	text, _ := json.Marshal(body)
	return &mcp.CallToolResult{IsError: true, StructuredContent: body, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
}

// protocolError is err as the answer to a resources/read or prompts/get, which have no tool
// errors: a JSON-RPC error whose data is the carryon error. A session or item that is missing
// codeResourceNotFound is the JSON-RPC error code of a resource that does not exist, as the MCP
// specification names it (-32002).
const codeResourceNotFound int64 = -32002

// (or another user's) is the protocol's "resource not found".
func (s *server) protocolError(ctx context.Context, op, uri string, err error) error {
	info := s.errorOf(ctx, op, err)
	code := int64(jsonrpc.CodeInternalError)
	switch info.Code {
	case carryon.ENOTFOUND:
		code = codeResourceNotFound
	case carryon.EINVALID:
		code = jsonrpc.CodeInvalidParams
	}
	data, _ := json.Marshal(struct {
		URI string `json:"uri,omitempty"`
		errorInfo
	}{uri, info})
	return &jsonrpc.Error{Code: code, Message: info.Message + " (" + info.Code + ")", Data: data}
}

// notImplemented is the error of a tool whose service this server was not given.
func notImplemented(what string) error {
	return carryon.Errorf(carryon.ENOTIMPLEMENTED, "this server has no %s", what)
}

// versioned refuses a write to an existing session without an expected version when the server
// requires one.
func (s *server) versioned(expected *int64) error {
	if s.needVer && expected == nil {
		return carryon.Errorf(carryon.EVERSIONNEEDED, "this server requires the expected version on writes: pass expected_version (get_session tells the version)")
	}
	return nil
}

// withReceipt returns ctx with a write receipt for the service to fill in: the one ctx has
// already, or a new one.
func withReceipt(ctx context.Context) (context.Context, *carryon.WriteReceipt) {
	if r := carryon.ReceiptFromContext(ctx); r != nil {
		return ctx, r
	}
	r := &carryon.WriteReceipt{}
	return carryon.NewContextWithReceipt(ctx, r), r
}

// hints are the annotations of a tool. readOnly tools change nothing; the others say whether a
// repeat with the same arguments changes nothing more (idempotent) and whether they can destroy
// what was there (destructive). Every tool acts on carryon's own store only (closed world),
// except start_run, whose agent calls a model and its tools.
func hints(title string, readOnly, idempotent, destructive bool) *mcp.ToolAnnotations {
	a := &mcp.ToolAnnotations{Title: title, ReadOnlyHint: readOnly, IdempotentHint: idempotent || readOnly,
		OpenWorldHint: carryon.Ptr(false)}
	if !readOnly {
		a.DestructiveHint = carryon.Ptr(destructive)
	}
	return a
}
