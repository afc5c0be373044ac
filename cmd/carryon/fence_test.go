package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/model/modeltest"
)

// talkingModel is an OpenAI-compatible endpoint whose model says a sentence before each tool call
// (write_file), then answers "Done." once the tool's result is in the conversation. Its first
// request is held until release is closed: the model of the instance that will be paused.
type talkingModel struct {
	*httptest.Server
	mu      sync.Mutex
	n       int
	first   chan struct{} // closed when the first request arrived
	release chan struct{}
}

func newTalkingModel(t *testing.T) *talkingModel {
	m := &talkingModel{first: make(chan struct{}), release: make(chan struct{})}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.n++
		n := m.n
		m.mu.Unlock()
		if n == 1 {
			close(m.first)
			<-m.release
		}
		var req struct {
			Messages []struct{ Role string } `json:"messages"`
		}
		json.Unmarshal(body, &req)
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": ""}, nil))
		if last := len(req.Messages) - 1; last >= 0 && req.Messages[last].Role == "tool" {
			s.Data(modeltest.OpenAIChunk(map[string]any{"content": "Done."}, nil))
			s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
			s.Done()
			return
		}
		for _, p := range []string{"Let me ", "write the ", "notes first. "} {
			s.Data(modeltest.OpenAIChunk(map[string]any{"content": p}, nil))
		}
		s.Data(modeltest.OpenAIChunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": 0, "id": "call_notes", "type": "function",
			"function": map[string]any{"name": "write_file", "arguments": `{"path":"notes.md","content":"the notes\n"}`},
		}}}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "tool_calls"))
		s.Done()
	}))
	t.Cleanup(func() {
		select {
		case <-m.release:
		default:
			close(m.release)
		}
		m.Close()
	})
	return m
}

// TestPausedTalkingInstanceIsFenced: two instances on one PostgreSQL; A's model talks before its
// tool call. A is paused (SIGSTOP) in that model call past its lease, B takes the run over and
// finishes it, then A is continued (SIGCONT): A's first event is refused and A gives the run up.
// Both processes are alive afterwards, the run finished once, and no message is stored twice.
// (On cac1ba6 A died: "range function continued iteration after function for loop body returned
// false".)
func TestPausedTalkingInstanceIsFenced(t *testing.T) {
	t.Parallel()
	m := newTalkingModel(t)
	env := []string{"OPENAI_BASE_URL=" + m.URL + "/v1", "OPENAI_API_KEY=sk-test"}
	model := []string{"--provider", "openai", "--model", "gpt-test"}
	c := startCluster(t, 1, env, append([]string{"--lease-ttl", "1s"}, model...))
	a := c.srvs[0]
	sid := must(t, a.url, c.key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	runID := must(t, a.url, c.key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "Write the notes"}, 202).json(t)["id"].(string)
	<-m.first // A is in its model call
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	c.args = append(c.args, append([]string{"--lease-ttl", "5s"}, model...))
	c.srvs = append(c.srvs, c.start(1, t.TempDir()))
	b := c.srvs[1]
	run := waitRun(t, b, c.key, runID)
	if run["status"] != "succeeded" || run["attempt"] != 2.0 {
		t.Fatalf("run on B: %v", run)
	}
	before := must(t, b.url, c.key, "GET", "/v1/sessions/"+sid+"?messages=100", nil, 200).body

	close(m.release) // A's model answers, talking first
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if !within(30*time.Second, func() bool { return strings.Contains(a.logs.String(), "run lost to another runner") }) {
		t.Fatalf("A did not give the run up; its logs:\n%s", a.logs)
	}
	for _, srv := range []*server{a, b} {
		must(t, srv.url, "", "GET", "/healthz", nil, 200)
	}
	if strings.Contains(a.logs.String(), "panic") {
		t.Fatalf("A panicked:\n%s", a.logs)
	}
	after := must(t, b.url, c.key, "GET", "/v1/sessions/"+sid+"?messages=100", nil, 200).body
	if string(before) != string(after) {
		t.Fatalf("A wrote after losing the run:\n%s\n%s", before, after)
	}
	var v struct {
		Messages []struct {
			Role, Content string
			ToolCallID    string `json:"tool_call_id"`
		}
	}
	json.Unmarshal(after, &v)
	seen := map[string]bool{}
	for _, msg := range v.Messages {
		k := msg.Role + "|" + msg.Content + "|" + msg.ToolCallID
		if seen[k] {
			t.Fatalf("message stored twice: %+v", msg)
		}
		seen[k] = true
	}
	if final := must(t, b.url, c.key, "GET", "/v1/runs/"+runID, nil, 200).json(t); final["status"] != "succeeded" || final["attempt"] != 2.0 {
		t.Fatalf("the run after A came back: %v", final)
	}
	events := must(t, b.url, c.key, "GET", "/v1/runs/"+runID+"/events", nil, 200).body
	if n := strings.Count(string(events), "event: run.finished") + strings.Count(string(events), "event: run.failed"); n != 1 {
		t.Fatalf("%d end events, want 1:\n%s", n, events)
	}
}
