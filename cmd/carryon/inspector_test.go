package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/npmtest"
	"github.com/carryon-hub/carryon/internal/poll"
)

// npmBin returns the path of a tool pinned in .ci/npm (package npmtest: skipped without it,
// failed under CARRYON_TEST_REQUIRE_NPM=1).
func npmBin(t *testing.T, name string) string { return npmtest.Bin(t, name) }

// mcpdo is the MCP inspector's connection CLI (a client nobody here wrote) with a daemon of its
// own: its home directory (catalog, secrets, daemon socket) is a fresh one, and the named
// connections come from a read-only config file.
type mcpdo struct {
	bin, config string
	env         []string
}

// newMCPDo writes the config file with servers (the standard mcpServers shape) into a fresh home
// directory and stops the daemon the first command starts when the test ends.
func newMCPDo(t *testing.T, servers map[string]any) *mcpdo {
	t.Helper()
	bin := npmBin(t, "mcpdo")
	home, err := os.MkdirTemp("", "mcpdo-") // short: the daemon's socket path is bounded
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(home, "carryon.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(config, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "MCP_INSPECTOR_SECRET_STORE=file"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "MCP_") {
			env = append(env, kv)
		}
	}
	m := &mcpdo{bin: bin, config: config, env: env}
	t.Cleanup(func() {
		sock := filepath.Join(home, ".mcp-inspector", "mcpdod.sock")
		if _, err := os.Stat(sock); err == nil {
			if _, code, out := m.run(t, "daemon", "stop"); code != 0 {
				t.Errorf("mcpdo daemon stop: %s", out)
			}
			poll.Within(10*time.Second, func() bool { _, err := os.Stat(sock); return err != nil })
		}
		os.RemoveAll(home)
	})
	return m
}

// run runs mcpdo with args and --format json, and returns its JSON answer (nil when stdout is not
// JSON), its exit code (0 ok, 3 auth_required, 5 a tool error) and its output for messages.
func (m *mcpdo) run(t *testing.T, args ...string) (answer map[string]any, code int, out string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.bin, append([]string{"--format", "json", "--config", m.config}, args...)...)
	cmd.Env = m.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("mcpdo %v: %v", args, err)
	}
	json.Unmarshal(stdout.Bytes(), &answer)
	return answer, code, fmt.Sprintf("%s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
}

// ok is run for a command that must succeed with a JSON answer.
func (m *mcpdo) ok(t *testing.T, args ...string) map[string]any {
	t.Helper()
	answer, code, out := m.run(t, args...)
	if code != 0 || answer == nil {
		t.Fatalf("mcpdo %s", out)
	}
	return answer
}

// TestMCPInspector drives carryon's MCP server with the MCP inspector's connection CLI (mcpdo, of
// @modelcontextprotocol/inspector 2.x), over stdio (`carryon mcp`) and over streamable HTTP (/mcp
// with a bearer header), against a real `carryon serve`: it connects each once, then runs
// tools/list, tools/call (get_session, list_webhooks, a missing session, append_messages twice with one request
// id stores one message), resources/read and prompts/get against the named connection; a
// connection without a key or with a wrong one is refused with carryon's 401.
func TestMCPInspector(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	mcp := newMCPDo(t, map[string]any{
		"carryon-stdio": map[string]any{"command": binary, "args": []string{"mcp"},
			"env": map[string]string{"CARRYON_SERVER": srv.url, "CARRYON_DATA": data}},
		"carryon-http": map[string]any{"type": "http", "url": srv.url + "/mcp",
			"headers": map[string]string{"Authorization": "Bearer " + key}},
		"no-key":    map[string]any{"type": "http", "url": srv.url + "/mcp"},
		"wrong-key": map[string]any{"type": "http", "url": srv.url + "/mcp", "headers": map[string]string{"Authorization": "Bearer ck_wrong"}},
	})
	for _, name := range []string{"stdio", "http"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			conn := "@carryon-" + name
			if c := mcp.ok(t, "connect", "carryon-"+name); c["name"] != "carryon-"+name {
				t.Fatalf("connect: %v", c)
			}
			id := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "over " + name,
				"working_memory": map[string]any{"goal": "test " + name, "next_action": "append twice",
					"plan": []any{map[string]any{"title": "connect", "status": "done"}}}}, 201).json(t)["id"].(string)

			var names []string
			for _, tl := range mcp.ok(t, conn, "tools/list")["tools"].([]any) {
				names = append(names, tl.(map[string]any)["name"].(string))
			}
			if slices.Sort(names); !slices.Equal(names, mcpTools) {
				t.Fatalf("tools/list: %v, want %v", names, mcpTools)
			}

			got := mcp.ok(t, conn, "tools/call", "get_session", "session_id:="+id)
			if sc := got["structuredContent"].(map[string]any); got["isError"] == true || sc["id"] != id ||
				sc["working_memory"].(map[string]any)["goal"] != "test "+name {
				t.Fatalf("get_session: %v", got)
			}
			if hooks := mcp.ok(t, conn, "tools/call", "list_webhooks"); hooks["isError"] == true ||
				mustJSONString(t, hooks["structuredContent"]) != `{"items":[]}` {
				t.Fatalf("list_webhooks: %v", hooks)
			}
			missing, code, out := mcp.run(t, conn, "tools/call", "get_session", "session_id:=sess_missing")
			if code != 5 || missing["isError"] != true ||
				missing["structuredContent"].(map[string]any)["error"].(map[string]any)["code"] != "not_found" {
				t.Fatalf("get_session of a missing session is not a not_found tool error: %s", out)
			}

			var versions []any
			for i := range 2 {
				res := mcp.ok(t, conn, "tools/call", "append_messages", "--tool-args-json",
					`{"session_id":"`+id+`","messages":[{"role":"user","content":"only once"}],"request_id":"once-`+name+`"}`)
				sc := res["structuredContent"].(map[string]any)
				if res["isError"] == true || sc["replayed"] != (i == 1) {
					t.Fatalf("append_messages #%d: %v", i+1, res)
				}
				versions = append(versions, sc["version"])
			}
			if versions[0] != versions[1] {
				t.Fatalf("the repeat moved the version: %v", versions)
			}
			if n := must(t, srv.url, key, "GET", "/v1/sessions/"+id, nil, 200).json(t)["message_count"]; n != float64(1) {
				t.Fatalf("two appends with one request id stored %v messages", n)
			}

			res := mcp.ok(t, conn, "resources/read", "carryon://sessions/"+id+"/memory")
			content := res["contents"].([]any)[0].(map[string]any)
			if !strings.Contains(content["text"].(string), "append twice") || res["cacheScope"] != "private" {
				t.Fatalf("resources/read: %v", res)
			}

			prompt := mcp.ok(t, conn, "prompts/get", "continue_task", "--prompt-args", "session_id="+id)
			txt := prompt["messages"].([]any)[0].(map[string]any)["content"].(map[string]any)["text"].(string)
			for _, want := range []string{"Goal: test " + name, "Next action: append twice", "1. [done] connect", "user: only once"} {
				if !strings.Contains(txt, want) {
					t.Errorf("continue_task lacks %q:\n%s", want, txt)
				}
			}
		})
	}
	t.Run("http without a key", func(t *testing.T) {
		t.Parallel()
		for name, detail := range map[string]string{"no-key": "needs an API key", "wrong-key": "not valid"} {
			// --stored-auth-only: a 401 is reported, not answered with an interactive OAuth sign-in.
			_, code, out := mcp.run(t, "--stored-auth-only", "connect", name)
			if code != 3 || !strings.Contains(out, `\"status\":401`) || !strings.Contains(out, detail) {
				t.Errorf("%s: the inspector was not refused with carryon's 401: %s", name, out)
			}
		}
	})
}
