package mcptool

import (
	"context"
	"errors"
	"fmt"

	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of one listing, so that a server that never stops paging cannot exhaust memory.
const (
	maxPages = 1000
	maxTools = 10000
)

// listAll lists every tool of the server, following nextCursor to the last page.
func listAll(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	params := &mcp.ListToolsParams{}
	seen := make(map[string]bool)
	for page := 1; ; page++ {
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			return nil, err
		}
		out = append(out, res.Tools...)
		switch next := res.NextCursor; {
		case next == "":
			return out, nil
		case seen[next]:
			return nil, fmt.Errorf("the server sent cursor %q twice", next)
		case page >= maxPages || len(out) > maxTools:
			return nil, fmt.Errorf("the server has more than %d pages or %d tools", maxPages, maxTools)
		default:
			seen[next] = true
			params = &mcp.ListToolsParams{Cursor: next}
		}
	}
}

// isServerError reports whether err is the server's JSON-RPC error answer (the connection is fine).
func isServerError(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr)
}

// build turns the listed tools into carryon tools. A tool listed twice keeps its first entry; a
// tool whose schema tool.NewRegistry would refuse is left out with a warning, so that one bad
// tool does not make the whole agent's registry fail.
func (s *Server) build(listed []*mcp.Tool) []tool.Tool {
	var names []string
	unique := make(map[string]*mcp.Tool, len(listed))
	for _, t := range listed {
		if t == nil {
			continue
		}
		if _, dup := unique[t.Name]; dup {
			s.log.Warn("mcp server lists a tool twice; the first is kept", "tool", t.Name)
			continue
		}
		unique[t.Name] = t
		names = append(names, t.Name)
	}
	exposed := exposedNames(s.cfg.Name, names)
	out := make([]tool.Tool, 0, len(names))
	for _, n := range names {
		mt := unique[n]
		schema, err := inputSchema(mt.InputSchema)
		if err == nil {
			t := s.newTool(exposed[n], mt, schema)
			if _, err = tool.NewRegistry(t); err == nil {
				out = append(out, t)
				continue
			}
		}
		s.log.Warn("mcp tool left out: its input schema cannot be used", "tool", n, "error", err)
	}
	return out
}
