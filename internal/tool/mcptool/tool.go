package mcptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/telemetry"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MetaIdempotencyKey is the key in a tools/call request's _meta that carries tool.Call's
// IdempotencyKey (run_id/step/index, the same for every attempt of the call), so that a server
// can dedupe a call that carryon runs again after a crash.
const MetaIdempotencyKey = "carryon/idempotency_key"

// errTimedOut is the cause of a call's context when its CallTimeout ran out.
var errTimedOut = errors.New("the call timed out")

// Tool is one tool of an MCP server, offered as <server>__<tool>. It implements tool.Tool.
type Tool struct {
	server      *Server
	name        string
	mcpName     string
	description string
	schema      json.RawMessage
	effect      carryon.EffectClass
}

func (s *Server) newTool(name string, mt *mcp.Tool, schema json.RawMessage) *Tool {
	desc := mt.Description
	if desc == "" {
		desc = mt.Title
	}
	if desc == "" && mt.Annotations != nil {
		desc = mt.Annotations.Title
	}
	if desc == "" {
		desc = fmt.Sprintf("The tool %s of the MCP server %s.", mt.Name, s.cfg.Name)
	}
	return &Tool{server: s, name: name, mcpName: mt.Name, description: desc, schema: schema,
		effect: effectOf(s.cfg.TrustAnnotations, mt.Annotations)}
}

// effectOf is the effect class of a tool with annotations a: unsafe unless the server is trusted;
// then readOnlyHint means read, and idempotentHint with destructiveHint false means idempotent
// (destructiveHint defaults to true in the MCP specification).
func effectOf(trust bool, a *mcp.ToolAnnotations) carryon.EffectClass {
	switch {
	case !trust || a == nil:
		return carryon.EffectUnsafe
	case a.ReadOnlyHint:
		return carryon.EffectRead
	case a.IdempotentHint && a.DestructiveHint != nil && !*a.DestructiveHint:
		return carryon.EffectIdempotent
	}
	return carryon.EffectUnsafe
}

// Name is <server>__<tool>, sanitised to ^[a-zA-Z0-9_-]{1,64}$.
func (t *Tool) Name() string { return t.name }

// MCPName is the tool's name on its server.
func (t *Tool) MCPName() string { return t.mcpName }

// ServerName is the name of the tool's server.
func (t *Tool) ServerName() string { return t.server.cfg.Name }

// Description is the server's description of the tool (or its title).
func (t *Tool) Description() string { return t.description }

// Schema is the tool's inputSchema, an object schema.
func (t *Tool) Schema() json.RawMessage { return t.schema }

// Effect is the tool's effect class: unsafe, unless trusted annotations or WithEffect say
// otherwise.
func (t *Tool) Effect() carryon.EffectClass { return t.effect }

// WithEffect returns a copy of t with effect class e, for an agent profile's effects override.
// e must be read, idempotent or unsafe: an MCP tool cannot reconcile.
func (t *Tool) WithEffect(e carryon.EffectClass) (*Tool, error) {
	switch e {
	case carryon.EffectRead, carryon.EffectIdempotent, carryon.EffectUnsafe:
	default:
		return nil, carryon.Errorf(carryon.EINVALID, "tool %s: the effect class of an MCP tool is read, idempotent or unsafe, not %q", t.name, e)
	}
	c := *t
	c.effect = e
	return &c, nil
}

// Call calls the tool once, with c.IdempotencyKey in _meta under MetaIdempotencyKey. It waits for
// one of the server's MaxConcurrentCalls slots, connects (or reconnects) first if needed, and
// gives up after the server's CallTimeout, all of it counted. A server that answers isError,
// answers a JSON-RPC error, does not answer in time, is restarted or goes away returns an error
// whose text is meant for the model; when ctx itself ends, its cause is returned.
func (t *Tool) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	s := t.server
	timeout := s.cfg.callTimeout()
	// Close cancels the calls in flight (the SDK's Close would otherwise wait for them).
	octx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	defer context.AfterFunc(s.ctx, func() { abort(errClosed) })()
	cctx, cancel := context.WithTimeoutCause(octx, timeout, errTimedOut)
	defer cancel()
	release, err := s.acquire(cctx)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return tool.Result{}, context.Cause(ctx)
		case context.Cause(cctx) == errTimedOut:
			return tool.Result{}, fmt.Errorf("%s: MCP server %q had its %d calls in flight for all of %s; the call was not made",
				t.name, s.cfg.Name, cap(s.slots), timeout)
		}
		return tool.Result{}, fmt.Errorf("%s: the call was not made: %s", t.name, plain(err))
	}
	defer release()
	sess, err := s.session(cctx) // waits, within cctx, for a server being checked or restarted
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return tool.Result{}, context.Cause(ctx)
		case context.Cause(cctx) == errTimedOut:
			return tool.Result{}, fmt.Errorf("%s: MCP server %q could not be reached within %s; the call was not made", t.name, s.cfg.Name, timeout)
		}
		return tool.Result{}, fmt.Errorf("%s: the call was not made: %s", t.name, plain(err))
	}
	// The session's end (a restart, the server's exit) ends the call at once, with its cause.
	defer context.AfterFunc(sess.ctx, func() { abort(context.Cause(sess.ctx)) })()
	args := json.RawMessage(bytes.TrimSpace(c.Args))
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	params := &mcp.CallToolParams{Name: t.mcpName, Arguments: args, Meta: mcp.Meta{}}
	if c.IdempotencyKey != "" {
		params.Meta[MetaIdempotencyKey] = c.IdempotencyKey
	}
	cctx, span := telemetry.StartMCP(cctx, "tools/call", t.mcpName, s.cfg.transportName(), s.cfg.host(), params.Meta)
	if len(params.Meta) == 0 {
		params.Meta = nil
	}
	res, err := await(cctx, func(ctx context.Context) (*mcp.CallToolResult, error) { return sess.cs.CallTool(ctx, params) })
	span.End(err, err == nil && res.IsError)
	if err != nil {
		return tool.Result{}, t.failed(ctx, cctx, sess, err)
	}
	s.answered(sess)
	text := render(res)
	if res.IsError {
		if text == "" {
			text = "the tool reported an error without a message"
		}
		return tool.Result{}, errors.New(t.name + ": " + text)
	}
	return tool.Result{Content: text}, nil
}

// failed is the error of a call on sess that got no result: err is the SDK's, ctx the caller's
// and cctx the call's own context. The SDK sends notifications/cancelled for a request whose
// context ends; a call left unanswered makes the server be checked (see unanswered).
func (t *Tool) failed(ctx, cctx context.Context, sess *session, err error) error {
	s := t.server
	cause := context.Cause(cctx)
	var deaf *unresponsiveError
	switch {
	case ctx.Err() != nil:
		s.unanswered(sess, false)
		return context.Cause(ctx)
	case cause == errTimedOut:
		s.unanswered(sess, true)
		return fmt.Errorf("%s: MCP server %q did not answer within %s; the call may or may not have taken effect", t.name, s.cfg.Name, s.cfg.callTimeout())
	case cause == errClosed:
		return fmt.Errorf("%s: the connection to MCP server %q was closed during the call; the call may or may not have taken effect", t.name, s.cfg.Name)
	case errors.As(cause, &deaf):
		return fmt.Errorf("%s: MCP server %q stopped answering and was restarted during the call (%s); the call may or may not have taken effect", t.name, s.cfg.Name, deaf.reason)
	case isServerError(err):
		s.answered(sess)
		return fmt.Errorf("%s: MCP server %q refused the call: %v", t.name, s.cfg.Name, serverMessage(err))
	}
	if cause != nil { // the session ended with this cause
		err = cause
	}
	s.end(sess, err)
	return fmt.Errorf("%s: the connection to MCP server %q was lost during the call (%v); the call may or may not have taken effect", t.name, s.cfg.Name, err)
}

// plain is err's text without the code an application error carries.
func plain(err error) string {
	if e, ok := carryon.AsError(err); ok {
		return e.Message
	}
	return err.Error()
}
