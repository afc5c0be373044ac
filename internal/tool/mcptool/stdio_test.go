package mcptool_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/mcptool"
)

// stdioConfig runs the test binary as the stdio test server; the file it returns gets one line
// (the pid) per start of the server.
func stdioConfig(t *testing.T) (mcptool.Config, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	started := filepath.Join(t.TempDir(), "started")
	return mcptool.Config{Name: "proc", Command: []string{exe},
		Env: map[string]string{serverEnv: "stdio", "MCPTOOL_TEST_STARTED": started}}, started
}

func starts(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

func byName(t *testing.T, tools []tool.Tool) map[string]tool.Tool {
	t.Helper()
	m := map[string]tool.Tool{}
	for _, tl := range tools {
		m[tl.Name()] = tl
	}
	return m
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestStdioServerStartsLazilyAndRestartsAfterACrashMidCall(t *testing.T) {
	t.Parallel()
	cfg, started := stdioConfig(t)
	s := newServer(t, cfg)
	if got := starts(t, started); len(got) != 0 {
		t.Fatalf("the server was started before first use: %v", got)
	}
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := names(tools); !slices.Equal(got, []string{"proc__block", "proc__env", "proc__pid"}) {
		t.Fatalf("tools = %v", got)
	}
	tl := byName(t, tools)
	first, err := tl["proc__pid"].Call(context.Background(), tool.Call{})
	if err != nil {
		t.Fatal(err)
	}
	if got := starts(t, started); !slices.Equal(got, []string{first.Content}) {
		t.Fatalf("starts = %v, pid tool says %s", got, first.Content)
	}

	// The server is killed in the middle of a call.
	marker := filepath.Join(t.TempDir(), "in-call")
	args, _ := json.Marshal(map[string]string{"file": marker})
	errc := make(chan error, 1)
	go func() {
		_, err := tl["proc__block"].Call(context.Background(), tool.Call{Args: args})
		errc <- err
	}()
	var pid int
	eventually(t, "the server to be inside the call", func() bool {
		b, err := os.ReadFile(marker)
		pid, _ = strconv.Atoi(string(b))
		return err == nil && pid > 0
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "connection to MCP server \"proc\" was lost during the call") ||
			!strings.Contains(err.Error(), "may or may not have taken effect") {
			t.Errorf("call cut by a crash: err = %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call never returned after its server was killed (the default timeout is 60s)")
	}

	// The next call starts a new server process.
	second, err := tl["proc__pid"].Call(context.Background(), tool.Call{})
	if err != nil {
		t.Fatalf("the call after a crash did not reconnect: %v", err)
	}
	if second.Content == first.Content || second.Content == strconv.Itoa(pid) {
		t.Errorf("the call after the crash reached pid %s (before: %s, killed %d)", second.Content, first.Content, pid)
	}
	if got := starts(t, started); len(got) != 2 {
		t.Errorf("starts = %v, want 2", got)
	}
	// The tools are listed again from the new session and still work.
	tools, err = s.Tools(context.Background())
	if err != nil || len(tools) != 3 {
		t.Fatalf("tools after restart: %v, %v", names(tools), err)
	}

	// Close stops the process.
	newPid, _ := strconv.Atoi(second.Content)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the server process to exit on Close", func() bool { return !alive(newPid) })
	if _, err := tl["proc__pid"].Call(context.Background(), tool.Call{}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("a call after Close: err = %v", err)
	}
}

func TestStdioServerGetsOnlyTheSafeEnvironment(t *testing.T) {
	t.Parallel()
	cfg, _ := stdioConfig(t)
	cfg.Env["EXTRA_SETTING"] = "on"
	s := newServer(t, cfg)
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res, err := byName(t, tools)["proc__env"].Call(context.Background(), tool.Call{})
	if err != nil {
		t.Fatal(err)
	}
	allowed := append(mcptool.InheritedEnv(), serverEnv, "MCPTOOL_TEST_STARTED", "EXTRA_SETTING")
	got := strings.Fields(res.Content)
	for _, name := range got {
		if !slices.Contains(allowed, name) {
			t.Errorf("the server inherited %s", name)
		}
	}
	if !slices.Contains(got, "EXTRA_SETTING") {
		t.Errorf("the configured variable is missing from %v", got)
	}
	if os.Getenv("PATH") != "" && !slices.Contains(got, "PATH") {
		t.Errorf("PATH was not passed on: %v", got)
	}
}

func TestAServerThatCannotStartIsAnError(t *testing.T) {
	t.Parallel()
	cfg, _ := stdioConfig(t)
	cfg.Env[serverEnv] = "fail"
	s := newServer(t, cfg)
	_, err := s.Tools(context.Background())
	if carryon.ErrorCode(err) != carryon.EUNAVAILABLE || !strings.Contains(err.Error(), `cannot start MCP server "proc"`) ||
		!strings.Contains(err.Error(), "boom: the test server refuses to start") {
		t.Errorf("err = %v, want EUNAVAILABLE naming the server and quoting its stderr", err)
	}
	missing := newServer(t, mcptool.Config{Name: "missing", Command: []string{filepath.Join(t.TempDir(), "no-such-program")}})
	if _, err := missing.Tools(context.Background()); err == nil || !strings.Contains(err.Error(), "no-such-program") {
		t.Errorf("missing program: err = %v", err)
	}
	// A second try after failures waits out the backoff only when the caller's deadline allows.
	_, _ = missing.Tools(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := missing.Tools(ctx); err == nil || !strings.Contains(err.Error(), "restarting (next try in") {
		t.Errorf("within the backoff: err = %v", err)
	}
}

func TestCloseEndsACallInFlight(t *testing.T) {
	t.Parallel()
	cfg, _ := stdioConfig(t)
	s := mcptool.New(cfg, nil)
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "in-call")
	args, _ := json.Marshal(map[string]string{"file": marker})
	errc := make(chan error, 1)
	go func() {
		_, err := byName(t, tools)["proc__block"].Call(context.Background(), tool.Call{Args: args})
		errc <- err
	}()
	var pid int
	eventually(t, "the server to be inside the call", func() bool {
		b, err := os.ReadFile(marker)
		pid, _ = strconv.Atoi(string(b))
		return err == nil && pid > 0
	})
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second { // the SDK gives a server 2s to exit on EOF
		t.Errorf("Close took %s with a call in flight", took)
	}
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), `connection to MCP server "proc" was closed during the call`) {
			t.Errorf("the call in flight at Close: err = %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call in flight never returned after Close")
	}
	eventually(t, "the server process to be gone", func() bool { return !alive(pid) })
}
