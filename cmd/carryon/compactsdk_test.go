package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/model/modeltest"
	"github.com/carryon-hub/carryon/internal/npmtest"
)

// summaryAwareModel is an OpenAI-compatible model that answers a summary request (its system
// message starts with carryon's summary prompt) with a summary that keeps the code word it was
// given, and any other request with what its system message says the code word is ("nothing"
// when it says none).
func summaryAwareModel(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(body, &req)
		system, all := "", ""
		for _, m := range req.Messages {
			if m.Role == "system" {
				system += textOf(m.Content)
			}
			all += textOf(m.Content) + "\n"
		}
		reply := "the code word is nothing"
		switch {
		case strings.HasPrefix(system, "Summarize the conversation"):
			reply = "summary: nothing to keep"
			if strings.Contains(all, "ZEBRA") && strings.Contains(system, "keep the code word") {
				reply = "summary: the code word is ZEBRA"
			}
		case strings.Contains(system, "summary: the code word is ZEBRA"):
			reply = "the code word is ZEBRA"
		}
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": ""}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{"content": reply}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
		s.Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The OpenAI Node SDK's responses.compact against carryon: a response.compaction with the user
// messages and one compaction item, which fed back as input continues with the summary in the
// context; an altered item is refused.
func TestResponsesCompactSDK(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		npmtest.Missing(t, "node is not on PATH")
	}
	modules := filepath.Dir(filepath.Dir(npmtest.File(t, "openai/package.json")))
	m := summaryAwareModel(t)
	data := t.TempDir()
	srv := startServerEnv(t, data, []string{"OPENAI_BASE_URL=" + m.URL + "/v1", "OPENAI_API_KEY=sk-test"}, "--provider", "openai", "--model", "gpt-test")
	key := localKey(t, data)
	cmd := exec.Command("node", filepath.Join("testdata", "compact", "compact.cjs"))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "CARRYON_URL="+srv.url, "CARRYON_KEY="+key)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the SDK script: %v\n%s\nserver logs:\n%s", err, stderr.String(), srv.logs)
	}
	var out struct {
		Object, ID, Reply, Refused string
		Types, Users               []string
		HasContent                 bool
		Usage                      struct{ InputTokens, OutputTokens int } `json:"usage"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("the script printed %q: %v", stdout.String(), err)
	}
	if out.Object != "response.compaction" || !strings.HasPrefix(out.ID, "cmp_") || !out.HasContent {
		t.Fatalf("compacted response: %s", stdout.String())
	}
	if got := strings.Join(out.Types, ","); got != "message:user,message:user,compaction" {
		t.Fatalf("output items = %s, want the user messages then one compaction item", got)
	}
	if strings.Join(out.Users, "|") != "the code word is ZEBRA|remember it" {
		t.Fatalf("user messages = %q", out.Users)
	}
	if out.Reply != "the code word is ZEBRA" {
		t.Fatalf("the response after the compaction = %q: the summary was not in its context", out.Reply)
	}
	if !strings.HasPrefix(out.Refused, "400 input[0].encrypted_content") {
		t.Fatalf("an altered compaction item answered %q, want a 400 naming it", out.Refused)
	}
}
