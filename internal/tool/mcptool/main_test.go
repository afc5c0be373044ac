package mcptool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverEnv makes the test binary run as a small stdio MCP server (see stdioServer) instead of
// the tests, so that the stdio tests have a real process to start, kill and restart.
const serverEnv = "MCPTOOL_TEST_SERVER"

func TestMain(m *testing.M) {
	switch os.Getenv(serverEnv) {
	case "":
		os.Exit(m.Run())
	case "fail":
		fmt.Fprintln(os.Stderr, "boom: the test server refuses to start")
		os.Exit(3)
	case hardServerMode:
		if err := hardServer(); err != nil {
			fmt.Fprintln(os.Stderr, "hard test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	default:
		if err := stdioServer(); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// stdioServer serves over stdin/stdout: pid (its process id), env (its environment's names) and
// block (writes its pid to the file named by its argument, then waits until it is killed).
func stdioServer() error {
	if f := os.Getenv("MCPTOOL_TEST_STARTED"); f != "" {
		fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		fmt.Fprintln(fh, os.Getpid())
		fh.Close()
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "mcptool-test", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "pid", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(fmt.Sprint(os.Getpid())), nil
		})
	s.AddTool(&mcp.Tool{Name: "env", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var names []string
			for _, kv := range os.Environ() {
				names = append(names, strings.SplitN(kv, "=", 2)[0])
			}
			return text(strings.Join(names, "\n")), nil
		})
	s.AddTool(&mcp.Tool{Name: "block", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"file":{"type":"string"}},"required":["file"]}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ File string }
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			if err := os.WriteFile(args.File, fmt.Append(nil, os.Getpid()), 0o600); err != nil {
				return nil, err
			}
			<-ctx.Done()
			time.Sleep(time.Hour) // a cancelled call does not end either: only a kill does
			return text("unreachable"), nil
		})
	return s.Run(context.Background(), &mcp.StdioTransport{})
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// inMemory returns a Config.Transport that connects srv anew over in-memory pipes each time.
func inMemory(t *testing.T, srv *mcp.Server) func() mcp.Transport {
	var mu sync.Mutex
	var sessions []*mcp.ServerSession
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, ss := range sessions {
			ss.Close()
		}
	})
	return func() mcp.Transport {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), st, nil)
		if err != nil {
			panic(err) // the test's own server failing to connect is a bug of the test
		}
		mu.Lock()
		sessions = append(sessions, ss)
		mu.Unlock()
		return ct
	}
}

// requests counts the requests srv receives, by method.
type requests struct {
	mu sync.Mutex
	n  map[string]int
}

func countRequests(srv *mcp.Server) *requests {
	r := &requests{n: map[string]int{}}
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			r.mu.Lock()
			r.n[method]++
			r.mu.Unlock()
			return next(ctx, method, req)
		}
	})
	return r
}

func (r *requests) count(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[method]
}

// eventually is poll.Eventually: cond within 30 s, checked every 10 ms.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Eventually(t, what, cond)
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

func itoa(n int) string { return fmt.Sprint(n) }
