package mcpserver

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The URI templates of the resources.
const (
	sessionURI       = "carryon://sessions/{id}"
	workingMemoryURI = "carryon://sessions/{id}/memory"
	messagesURI      = "carryon://sessions/{id}/messages"
	memoryItemURI    = "carryon://memories/{namespace}/{key}"
)

// messagesWindow is how many of the last messages carryon://sessions/{id}/messages holds.
const messagesWindow = carryon.MaxMessageWindow

func (s *server) addResources(srv *mcp.Server) {
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: sessionURI, Name: "session", Title: "Session",
		Description: "A session with its state, version, working memory and last 20 messages.", MIMEType: "application/json"},
		s.resource(func(ctx context.Context, seg []string) (any, error) {
			return s.sessions.Get(ctx, seg[0], carryon.GetOptions{})
		}))
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: workingMemoryURI, Name: "working_memory", Title: "Working memory",
		Description: "A session's working memory (goal, plan, next_action, notes) with the versions it is at.", MIMEType: "application/json"},
		s.resource(func(ctx context.Context, seg []string) (any, error) {
			return s.sessions.GetWorkingMemory(ctx, seg[0])
		}))
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: messagesURI, Name: "messages", Title: "Messages",
		Description: "A session's last 1000 messages, oldest first (the newest that fit in the read budget: messages_truncated says when older ones were left out).", MIMEType: "application/json"},
		s.resource(func(ctx context.Context, seg []string) (any, error) {
			v, err := s.sessions.Get(ctx, seg[0], carryon.GetOptions{Messages: messagesWindow})
			if err != nil {
				return nil, err
			}
			return struct {
				SessionID string             `json:"session_id"`
				Version   int64              `json:"version"`
				Messages  []*carryon.Message `json:"messages"`
				Truncated bool               `json:"messages_truncated,omitempty"`
			}{v.ID, v.Version, v.Messages, v.MessagesTruncated}, nil
		}))
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: memoryItemURI, Name: "memory_item", Title: "Long-term memory item",
		Description: "An item of your long-term memory.", MIMEType: "application/json"},
		s.resource(func(ctx context.Context, seg []string) (any, error) {
			if s.longTerm == nil {
				return nil, notImplemented("long-term memory")
			}
			return s.longTerm.Get(ctx, seg[0], seg[1])
		}))
}

// resource makes the handler of a resource template: it takes the URI apart, calls read with
// its variables and answers the value as JSON, marked private.
func (s *server) resource(read func(ctx context.Context, vars []string) (any, error)) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		vars, err := uriVars(uri)
		if err != nil {
			return nil, s.protocolError(ctx, "resources/read", uri, err)
		}
		v, err := read(caller(ctx, req.Extra), vars)
		if err != nil {
			return nil, s.protocolError(ctx, "resources/read", uri, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, s.protocolError(ctx, "resources/read", uri, err)
		}
		return &mcp.ReadResourceResult{Cacheable: private,
			Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
	}
}

// uriVars returns the variables of a carryon:// URI, unescaped: [id] of a session's URIs,
// [namespace, key] of a memory item's.
func uriVars(uri string) ([]string, error) {
	rest, ok := strings.CutPrefix(uri, "carryon://")
	if !ok {
		return nil, carryon.Errorf(carryon.EINVALID, "%q is not a carryon:// URI", uri)
	}
	parts := strings.Split(rest, "/")
	for i, p := range parts {
		u, err := url.PathUnescape(p)
		if err != nil || u == "" {
			return nil, carryon.Errorf(carryon.EINVALID, "%q has an empty or badly escaped segment", uri)
		}
		parts[i] = u
	}
	switch {
	case parts[0] == "sessions" && (len(parts) == 2 || len(parts) == 3):
		return parts[1:2], nil
	case parts[0] == "memories" && len(parts) == 3:
		return parts[1:], nil
	}
	return nil, carryon.Errorf(carryon.EINVALID, "%q names no carryon resource", uri)
}
