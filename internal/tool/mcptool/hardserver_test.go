package mcptool_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The hard stdio test server (MCPTOOL_TEST_SERVER=hard) has the tools of the cases that break a
// connection: wedge stops the whole server from answering anything, hold keeps a call until the
// test releases it, big answers more than one message may hold. With wireEnv set, it appends every
// line it reads on stdin to that file, so a test sees what carryon sent.
const (
	hardServerMode = "hard"
	wireEnv        = "MCPTOOL_TEST_WIRE"
)

// hardConfig runs the test binary as the hard test server; dir gets its files: started (a pid
// per start of the server), wire (what it read on stdin), arrived (a line per hold call it got)
// and release (made by the test to let the hold calls return).
func hardConfig(t *testing.T) (cfg mcptool.Config, dir string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	return mcptool.Config{Name: "hard", Command: []string{exe}, Env: map[string]string{
		serverEnv: hardServerMode, "MCPTOOL_TEST_STARTED": filepath.Join(dir, "started"),
		wireEnv: filepath.Join(dir, "wire"), "MCPTOOL_TEST_DIR": dir,
	}}, dir
}

func hardServer() error {
	if f := os.Getenv("MCPTOOL_TEST_STARTED"); f != "" {
		if err := appendLine(f, fmt.Sprint(os.Getpid())); err != nil {
			return err
		}
	}
	dir := os.Getenv("MCPTOOL_TEST_DIR")
	var in io.Reader = os.Stdin
	if f := os.Getenv(wireEnv); f != "" {
		fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		defer fh.Close()
		in = io.TeeReader(os.Stdin, fh)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "mcptool-hard", Version: "1"}, nil)
	wedged := make(chan struct{})
	var wedgeOnce sync.Once
	// Once wedged, the server answers no request at all, as a server whose only thread is stuck.
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "initialize" && !strings.HasPrefix(method, "notifications/") {
				select {
				case <-wedged:
					time.Sleep(time.Hour) // the test kills the process
				default:
				}
			}
			return next(ctx, method, req)
		}
	})
	schema := json.RawMessage(`{"type":"object","properties":{"bytes":{"type":"integer"}}}`)
	s.AddTool(&mcp.Tool{Name: "pid", InputSchema: schema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(fmt.Sprint(os.Getpid())), nil
		})
	s.AddTool(&mcp.Tool{Name: "wedge", InputSchema: schema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			wedgeOnce.Do(func() { close(wedged) })
			if err := appendLine(filepath.Join(dir, "wedged"), fmt.Sprint(os.Getpid())); err != nil {
				return nil, err
			}
			time.Sleep(time.Hour) // deaf to notifications/cancelled too
			return text("unreachable"), nil
		})
	var inFlight, peak atomic.Int64
	s.AddTool(&mcp.Tool{Name: "hold", InputSchema: schema},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			if err := appendLine(filepath.Join(dir, "arrived"), "hold"); err != nil {
				return nil, err
			}
			for {
				if _, err := os.Stat(filepath.Join(dir, "release")); err == nil {
					return text("held"), nil
				}
				select {
				case <-ctx.Done(): // notifications/cancelled
					return nil, ctx.Err()
				case <-time.After(5 * time.Millisecond):
				}
			}
		})
	s.AddTool(&mcp.Tool{Name: "peak", InputSchema: schema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(fmt.Sprint(peak.Load())), nil
		})
	s.AddTool(&mcp.Tool{Name: "big", InputSchema: schema},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Bytes int }
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			return text(bigText(args.Bytes)), nil
		})
	return s.Run(context.Background(), &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{os.Stdout}})
}

// bigText is n bytes of text that starts with what needs escaping in JSON and two-byte runes.
func bigText(n int) string {
	const unit = "0123456789 é \"quoted\" back\\slash\n"
	var b strings.Builder
	b.WriteString("BEGIN ")
	for b.Len()+len(unit) <= min(n, 1<<20) {
		b.WriteString(unit)
	}
	b.WriteString(strings.Repeat("x", n-b.Len()))
	return b.String()
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func appendLine(file, line string) error {
	fh, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(fh, line)
	return errors.Join(err, fh.Close())
}

// lines returns the lines of file so far (none when it does not exist yet).
func lines(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// wireMessage is one JSON-RPC message the server read.
type wireMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	} `json:"params"`
}

// wire returns the messages the server has read so far (a line still being written is skipped).
func wire(t *testing.T, dir string) []wireMessage {
	t.Helper()
	fh, err := os.Open(filepath.Join(dir, "wire"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []wireMessage
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m wireMessage
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// hardTools starts the hard server's client and returns its tools by their MCP names.
func hardTools(t *testing.T, cfg mcptool.Config) (*mcptool.Server, map[string]tool.Tool) {
	t.Helper()
	s := newServer(t, cfg)
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]tool.Tool{}
	for _, tl := range tools {
		m[strings.TrimPrefix(tl.Name(), cfg.Name+"__")] = tl
	}
	return s, m
}

// receive returns the error a call sends on errc, failing t when none comes within within.
func receive(t *testing.T, errc <-chan error, within time.Duration) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(within):
		t.Fatalf("no answer within %s", within)
		return nil
	}
}
