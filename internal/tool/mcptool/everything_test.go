package mcptool_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/npmtest"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/mcptool"
)

func npmBin(t *testing.T, name string) string { return npmtest.Bin(t, name) }

// TestServerEverything runs the MCP project's reference server (@modelcontextprotocol/server-everything,
// pinned in .ci/npm) over stdio and calls its tools through a tool.Registry, as the engine does.
func TestServerEverything(t *testing.T) {
	t.Parallel()
	bin := npmBin(t, "mcp-server-everything")
	s := newServer(t, mcptool.Config{Name: "everything", Command: []string{bin, "stdio"},
		Env: map[string]string{"CARRYON_MCP_TEST": "passed on"}, TrustAnnotations: true})
	ctx := context.Background()
	tools, err := s.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := names(tools)
	for _, want := range []string{"everything__echo", "everything__get-structured-content", "everything__get-sum",
		"everything__get-tiny-image", "everything__get-env", "everything__toggle-simulated-logging"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s is not among its tools %v", want, got)
		}
	}
	valid := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	for _, n := range got {
		if !valid.MatchString(n) {
			t.Errorf("name %q is not a valid tool name", n)
		}
	}
	// Every schema it sends is one the registry accepts.
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	echo, _ := reg.Get("everything__echo")
	if echo.Description() != "Echoes back the input string" {
		t.Errorf("echo's description: %q", echo.Description())
	}
	// Trusted annotations: echo is readOnly; toggle-simulated-logging changes state.
	if e := echo.Effect(); e != carryon.EffectRead {
		t.Errorf("echo: effect %q, want read", e)
	}
	if toggle, _ := reg.Get("everything__toggle-simulated-logging"); toggle.Effect() != carryon.EffectUnsafe {
		t.Errorf("toggle-simulated-logging: effect %q, want unsafe", toggle.Effect())
	}

	call := func(name, args string) (tool.Result, error) {
		return reg.Invoke(ctx, name, tool.Call{Args: json.RawMessage(args), IdempotencyKey: "run_x/1/0"})
	}
	if res, err := call("everything__echo", `{"message":"hello, MCP"}`); err != nil || res.Content != "Echo: hello, MCP" {
		t.Errorf("echo: %q, %v", res.Content, err)
	}
	if res, err := call("everything__get-sum", `{"a":2,"b":40}`); err != nil || !strings.Contains(res.Content, "42") {
		t.Errorf("get-sum: %q, %v", res.Content, err)
	}
	// Structured output: its text block is the same JSON, so the model gets it once.
	res, err := call("everything__get-structured-content", `{"location":"Chicago"}`)
	if err != nil {
		t.Fatal(err)
	}
	var weather struct {
		Temperature float64 `json:"temperature"`
		Conditions  string  `json:"conditions"`
	}
	if err := json.Unmarshal([]byte(res.Content), &weather); err != nil || weather.Conditions == "" {
		t.Errorf("get-structured-content: %q (%v)", res.Content, err)
	}
	// The schema is checked before the call: Paris is not in its enum.
	var argErr *tool.ArgumentError
	if _, err := call("everything__get-structured-content", `{"location":"Paris"}`); !errors.As(err, &argErr) {
		t.Errorf("an argument outside the enum: err = %v", err)
	}
	if _, err := call("everything__echo", `{}`); !errors.As(err, &argErr) || !strings.Contains(err.Error(), "message") {
		t.Errorf("a missing argument: err = %v", err)
	}
	if res, err := call("everything__get-tiny-image", `{}`); err != nil || !regexp.MustCompile(`\[image image/png, \d+ bytes\]`).MatchString(res.Content) {
		t.Errorf("get-tiny-image: %q, %v", res.Content, err)
	}
	// The server sees only the safe environment and what the config adds.
	res, err = call("everything__get-env", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]string
	if err := json.Unmarshal([]byte(res.Content), &env); err != nil {
		t.Fatalf("get-env: %q: %v", res.Content, err)
	}
	if env["CARRYON_MCP_TEST"] != "passed on" {
		t.Errorf("the configured variable did not reach the server: %v", env)
	}
	inherited := mcptool.InheritedEnv()
	for k := range env {
		if k != "CARRYON_MCP_TEST" && !slices.Contains(inherited, k) {
			t.Errorf("the server inherited %s", k)
		}
	}
}

// TestServerEverythingOverStreamableHTTP runs the same reference server in its streamable HTTP
// mode and calls it by URL.
func TestServerEverythingOverStreamableHTTP(t *testing.T) {
	t.Parallel()
	bin := npmBin(t, "mcp-server-everything")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // the server binds it next; another process taking it first would fail the test visibly
	cmd := exec.Command(bin, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	eventually(t, "the HTTP server to listen", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})

	s := newServer(t, mcptool.Config{Name: "web", URL: "http://" + addr + "/mcp", Headers: map[string]string{"X-Test": "1"}})
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := reg.Invoke(context.Background(), "web__echo", tool.Call{Args: json.RawMessage(`{"message":"over HTTP"}`)})
	if err != nil || res.Content != "Echo: over HTTP" {
		t.Errorf("echo: %q, %v", res.Content, err)
	}
	if e := tools[0].Effect(); e != carryon.EffectUnsafe {
		t.Errorf("untrusted server's tool: effect %q, want unsafe", e)
	}
}
