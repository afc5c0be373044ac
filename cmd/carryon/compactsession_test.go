package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon/internal/model/modeltest"
	"github.com/carryon-hub/carryon/internal/npmtest"
)

// sentRequest is what the fake model of TestAgentsSDKCompactionSession was sent: its system
// text and its user messages.
type sentRequest struct {
	system string
	users  []string
}

// compactionModel is an OpenAI-compatible model that keeps what it was sent. It answers a
// summary request (carryon's summary prompt) with "summary: the code word is ZEBRA" when the
// transcript has the code word, and any other request with the last user message, how many user
// messages it was sent and whether its system message carried that summary.
func compactionModel(t *testing.T) (*httptest.Server, func() []sentRequest) {
	var mu sync.Mutex
	var sent []sentRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(body, &req)
		var got sentRequest
		all := ""
		for _, m := range req.Messages {
			switch m.Role {
			case "system":
				got.system += textOf(m.Content)
			case "user":
				got.users = append(got.users, textOf(m.Content))
			}
			all += textOf(m.Content) + "\n"
		}
		mu.Lock()
		sent = append(sent, got)
		mu.Unlock()
		var reply string
		switch {
		case strings.HasPrefix(got.system, "Summarize the conversation") && strings.Contains(all, "ZEBRA"):
			reply = "summary: the code word is ZEBRA"
		case strings.HasPrefix(got.system, "Summarize the conversation"):
			reply = "summary: nothing to keep"
		default:
			reply = fmt.Sprintf("You said: %s (%d user messages, summary %v)", got.users[len(got.users)-1], len(got.users),
				strings.Contains(got.system, "summary: the code word is ZEBRA"))
		}
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": ""}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{"content": reply}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
		s.Done()
	}))
	t.Cleanup(srv.Close)
	return srv, func() []sentRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]sentRequest(nil), sent...)
	}
}

// TestAgentsSDKCompactionSession: the Agents SDK's OpenAIResponsesCompactionSession (pinned in
// .ci/npm) over a MemorySession completes 30 turns with carryon as the model, a compaction
// forced after turn 20 (responses.compact on the previous response). The model checks what it
// was sent: turns 1 to 20 the whole history and no summary; the one summary request; turns 21
// to 30 the summary in the system message and only the user messages after the compaction, none
// twice (the compacted history the SDK sends back is not stored again).
func TestAgentsSDKCompactionSession(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		npmtest.Missing(t, "node is not on PATH")
	}
	npmtest.File(t, "@openai/agents/package.json")
	modules := filepath.Dir(filepath.Dir(npmtest.File(t, "openai/package.json")))
	m, sent := compactionModel(t)
	data := t.TempDir()
	srv := startServerEnv(t, data, []string{"OPENAI_BASE_URL=" + m.URL + "/v1", "OPENAI_API_KEY=sk-test"}, "--provider", "openai", "--model", "gpt-test")
	key := localKey(t, data)
	cmd := exec.Command("node", filepath.Join("testdata", "agents-sdk", "compaction.cjs"))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "CARRYON_URL="+srv.url, "CARRYON_KEY="+key, "OPENAI_AGENTS_DISABLE_TRACING=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the Agents SDK script: %v\n%s\nserver logs:\n%s", err, stderr.String(), srv.logs)
	}
	var out struct {
		Replies     []string
		Compactions []int
		Items       []struct{ Type, Role string }
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("the script printed %q: %v", stdout.String(), err)
	}
	if len(out.Replies) != 30 || len(out.Compactions) != 1 || out.Compactions[0] != 20 {
		t.Fatalf("%d replies, compactions after turns %v", len(out.Replies), out.Compactions)
	}
	for i, r := range out.Replies {
		turn := i + 1
		want := fmt.Sprintf("(%d user messages, summary false)", turn)
		if turn > 20 {
			want = fmt.Sprintf("(%d user messages, summary true)", turn-20)
		}
		if !strings.HasSuffix(r, want) {
			t.Errorf("turn %d: the reply %q, want it to end %q", turn, r, want)
		}
	}
	summaries, calls := 0, 0
	for _, s := range sent() {
		if strings.HasPrefix(s.system, "Summarize the conversation") {
			if summaries++; calls != 20 {
				t.Errorf("a summary was asked for after %d turns, want 20", calls)
			}
			continue
		}
		calls++
		if calls > 20 && !strings.Contains(s.system, "summary: the code word is ZEBRA") {
			t.Errorf("turn %d was sent no summary:\n%s", calls, s.system)
		}
		if calls == 30 && strings.Join(s.users, "|") != "Turn 21.|Turn 22.|Turn 23.|Turn 24.|Turn 25.|Turn 26.|Turn 27.|Turn 28.|Turn 29.|Turn 30." {
			t.Errorf("turn 30 was sent the user messages %q", s.users)
		}
	}
	if summaries != 1 || calls != 30 {
		t.Fatalf("the model was asked for %d summaries and %d turns", summaries, calls)
	}
	var kinds []string
	for _, it := range out.Items {
		kinds = append(kinds, it.Type+"/"+it.Role)
	}
	want := strings.Repeat("message/user ", 20) + "compaction/ " + strings.Repeat("message/user message/assistant ", 10)
	if got := strings.Join(kinds, " ") + " "; got != want {
		t.Fatalf("the session's items after 30 turns:\n%s\nwant\n%s", got, want)
	}
}
