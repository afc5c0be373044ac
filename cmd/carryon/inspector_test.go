package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/npmtest"
)

// npmBin returns the path of a tool pinned in .ci/npm (package npmtest: skipped without it,
// failed under CARRYON_TEST_REQUIRE_NPM=1).
func npmBin(t *testing.T, name string) string { return npmtest.Bin(t, name) }

// inspector runs the MCP inspector's CLI (a client nobody here wrote) with the connection
// arguments conn and the request args, and returns its JSON answer; failed says whether the
// inspector exited non-zero, with its output.
func inspector(t *testing.T, bin string, conn []string, args ...string) (answer map[string]any, failed string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(append([]string{"--cli"}, conn...), args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, err.Error() + "\n" + stdout.String() + stderr.String()
	}
	if err := json.Unmarshal(stdout.Bytes(), &answer); err != nil {
		t.Fatalf("inspector %v: the answer is not JSON (%v):\n%s\n%s", args, err, stdout.String(), stderr.String())
	}
	return answer, ""
}

// TestMCPInspector drives carryon's MCP server with @modelcontextprotocol/inspector's CLI, over
// stdio (`carryon mcp`) and over streamable HTTP (/mcp with a bearer header), against a real
// `carryon serve`: tools/list, tools/call (get_session; append_messages twice with one request
// id stores one message), resources/read and prompts/get.
func TestMCPInspector(t *testing.T) {
	t.Parallel()
	bin := npmBin(t, "mcp-inspector")
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	transports := map[string][]string{
		"stdio": {"-e", "CARRYON_SERVER=" + srv.url, "-e", "CARRYON_DATA=" + data, binary, "mcp"},
		"http":  {srv.url + "/mcp", "--transport", "http", "--header", "Authorization: Bearer " + key},
	}
	for name, conn := range transports {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			id := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "over " + name,
				"working_memory": map[string]any{"goal": "test " + name, "next_action": "append twice",
					"plan": []any{map[string]any{"title": "connect", "status": "done"}}}}, 201).json(t)["id"].(string)

			list, failed := inspector(t, bin, conn, "--method", "tools/list")
			if failed != "" {
				t.Fatalf("tools/list: %s", failed)
			}
			var names []string
			for _, tl := range list["tools"].([]any) {
				names = append(names, tl.(map[string]any)["name"].(string))
			}
			if len(names) != 17 || !strings.Contains(strings.Join(names, " "), "delete_message") {
				t.Fatalf("tools/list: %v", names)
			}

			got, failed := inspector(t, bin, conn, "--method", "tools/call", "--tool-name", "get_session", "--tool-arg", "session_id="+id)
			if failed != "" || got["isError"] == true {
				t.Fatalf("get_session: %v %s", got, failed)
			}
			if sc := got["structuredContent"].(map[string]any); sc["id"] != id || sc["working_memory"].(map[string]any)["goal"] != "test "+name {
				t.Fatalf("get_session: %v", sc)
			}

			var versions []any
			for i := range 2 {
				res, failed := inspector(t, bin, conn, "--method", "tools/call", "--tool-name", "append_messages",
					"--tool-arg", "session_id="+id, `messages=[{"role":"user","content":"only once"}]`, "request_id=once-"+name)
				if failed != "" || res["isError"] == true {
					t.Fatalf("append_messages #%d: %v %s", i+1, res, failed)
				}
				sc := res["structuredContent"].(map[string]any)
				if sc["replayed"] != (i == 1) {
					t.Fatalf("append_messages #%d: replayed %v", i+1, sc["replayed"])
				}
				versions = append(versions, sc["version"])
			}
			if versions[0] != versions[1] {
				t.Fatalf("the repeat moved the version: %v", versions)
			}
			if n := must(t, srv.url, key, "GET", "/v1/sessions/"+id, nil, 200).json(t)["message_count"]; n != float64(1) {
				t.Fatalf("two appends with one request id stored %v messages", n)
			}

			res, failed := inspector(t, bin, conn, "--method", "resources/read", "--uri", "carryon://sessions/"+id+"/memory")
			if failed != "" {
				t.Fatalf("resources/read: %s", failed)
			}
			content := res["contents"].([]any)[0].(map[string]any)
			if !strings.Contains(content["text"].(string), "append twice") || res["cacheScope"] != "private" {
				t.Fatalf("resources/read: %v", res)
			}

			prompt, failed := inspector(t, bin, conn, "--method", "prompts/get", "--prompt-name", "continue_task", "--prompt-args", "session_id="+id)
			if failed != "" {
				t.Fatalf("prompts/get: %s", failed)
			}
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
		for name, conn := range map[string][]string{
			"no key":    {srv.url + "/mcp", "--transport", "http"},
			"wrong key": {srv.url + "/mcp", "--transport", "http", "--header", "Authorization: Bearer ck_wrong"},
		} {
			if _, failed := inspector(t, bin, conn, "--method", "tools/list"); !strings.Contains(failed, "401") {
				t.Errorf("%s: the inspector was not refused with 401: %q", name, failed)
			}
		}
	})
}
