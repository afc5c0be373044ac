package mcptool_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stall makes srv never answer the requests of the given methods (until they are cancelled).
func stall(srv *mcp.Server, methods ...string) {
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			for _, m := range methods {
				if m == method {
					<-ctx.Done()
					return nil, ctx.Err()
				}
			}
			return next(ctx, method, req)
		}
	})
}

func TestAServerThatNeverListsGivesAnErrorInTime(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "mute"}, nil)
	addText(srv, "t", "x")
	stall(srv, "tools/list")
	s := newServer(t, mcptool.Config{Name: "mute", Transport: inMemory(t, srv), CallTimeout: 200 * time.Millisecond})
	start := time.Now()
	_, err := s.Tools(context.Background())
	if carryon.ErrorCode(err) != carryon.EUNAVAILABLE || !strings.Contains(err.Error(), `MCP server "mute" did not list its tools within 200ms`) {
		t.Errorf("err = %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Tools took %s", took)
	}
}

func TestAServerThatNeverInitialisesGivesAnErrorInTime(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "mute"}, nil)
	addText(srv, "t", "x")
	stall(srv, "initialize", "server/discover")
	s := newServer(t, mcptool.Config{Name: "mute", Transport: inMemory(t, srv), ConnectTimeout: 200 * time.Millisecond})
	start := time.Now()
	_, err := s.Tools(context.Background())
	if carryon.ErrorCode(err) != carryon.EUNAVAILABLE || !strings.Contains(err.Error(), `cannot start MCP server "mute": no answer to initialize in time`) {
		t.Errorf("err = %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Tools took %s", took)
	}
	// Close does not wait for anything the dead start left behind.
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Error("Close hangs")
	}
}
