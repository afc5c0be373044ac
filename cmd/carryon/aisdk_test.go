package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/npmtest"
)

// uiMessage is a UI message as the AI SDK's Chat holds it.
type uiMessage struct {
	ID    string `json:"id"`
	Role  string `json:"role"`
	Parts []struct {
		Type       string          `json:"type"`
		Text       string          `json:"text"`
		State      string          `json:"state"`
		ToolCallID string          `json:"toolCallId"`
		Output     json.RawMessage `json:"output"`
	} `json:"parts"`
}

// text is the message's text parts joined.
func (m uiMessage) text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// aiScript runs a phase of testdata/ai-sdk/chat.mjs against the server at url and returns the
// command, started, with its stdout lines; node and the pinned ai package are required.
func aiScript(t *testing.T, url, key, chatID, phase string, env ...string) (*exec.Cmd, *bufio.Scanner, *bytes.Buffer) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		npmtest.Missing(t, "node is not on PATH")
	}
	module := npmtest.File(t, "ai/dist/index.js")
	cmd := exec.Command("node", filepath.Join("testdata", "ai-sdk", "chat.mjs"), phase)
	cmd.Env = append(append(os.Environ(), "CARRYON_URL="+url, "CARRYON_KEY="+key, "CHAT_ID="+chatID, "AI_MODULE="+module), env...)
	stderr := &bytes.Buffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	return cmd, sc, stderr
}

// line reads the script's next stdout line as JSON into v.
func line(t *testing.T, sc *bufio.Scanner, stderr *bytes.Buffer, v any) {
	t.Helper()
	if !sc.Scan() {
		t.Fatalf("the script printed no more lines (%v); stderr:\n%s", sc.Err(), stderr)
	}
	if err := json.Unmarshal(sc.Bytes(), v); err != nil {
		t.Fatalf("the script printed %q: %v", sc.Text(), err)
	}
}

// TestAISDKChatAcrossKill: the AI SDK's own Chat over DefaultChatTransport sends a message to
// `carryon serve`; the server is killed (SIGKILL) while the answer streams and started again;
// a reloaded page's Chat, holding the messages it had, resumes the stream (useChat's resume,
// GET …/{id}/stream) and ends with one assistant message, its id the run's, whose text is the
// run's reply exactly once. Resuming once more finds nothing streaming (204) and changes nothing.
func TestAISDKChatAcrossKill(t *testing.T) {
	t.Parallel()
	m, calls := pacedModel(t)
	env := []string{"OPENAI_BASE_URL=" + m.URL + "/v1", "OPENAI_API_KEY=sk-test"}
	args := []string{"--provider", "openai", "--model", "gpt-test", "--lease-ttl", "2s"}
	data := t.TempDir()
	srv := startServerEnv(t, data, env, args...)
	key := localKey(t, data)
	kept, partial := chatUntilKilled(t, srv, key, "browser-chat")
	srv = startServerEnv(t, data, env, args...)
	wantResumed(t, srv.url, key, "browser-chat", kept, partial)
	if calls.Load() < 2 {
		t.Fatalf("the model was called %d times; the answer cut by the kill was not asked again", calls.Load())
	}
}

// TestAISDKResumeOnAnotherInstance: over PostgreSQL, the chat's answer streams from the
// instance that runs it, which is killed mid-answer; the page resumes on another instance (one
// that starts afterwards, over the same database, with a data directory of its own, and takes
// the run over) and gets the same message, the reply once. (The other instance starts late so
// that the first one runs the run: model text streams live only from the instance that calls
// the model; the others see it when the step is stored.)
func TestAISDKResumeOnAnotherInstance(t *testing.T) {
	t.Parallel()
	m, _ := pacedModel(t)
	env := []string{"OPENAI_BASE_URL=" + m.URL + "/v1", "OPENAI_API_KEY=sk-test"}
	args := []string{"--provider", "openai", "--model", "gpt-test", "--lease-ttl", "2s"}
	c := startCluster(t, 1, env, args)
	kept, partial := chatUntilKilled(t, c.srvs[0], c.key, "cluster-chat")
	other := startServerEnv(t, t.TempDir(), env, append([]string{"--db", c.dsn}, args...)...)
	wantResumed(t, other.url, c.key, "cluster-chat", kept, partial)
}

// chatUntilKilled sends "count to ten" with the SDK's Chat and kills srv once the answer's text
// streams; it returns the messages the page kept when the cut stream ended (JSON) and the
// streaming assistant message.
func chatUntilKilled(t *testing.T, srv *server, key, chatID string) (string, uiMessage) {
	t.Helper()
	cmd, sc, stderr := aiScript(t, srv.url, key, chatID, "kill")
	var streaming struct {
		Streaming bool
		Messages  []uiMessage
	}
	line(t, sc, stderr, &streaming)
	if !streaming.Streaming || len(streaming.Messages) != 2 || streaming.Messages[1].text() == "" {
		t.Fatalf("before the kill: %+v", streaming)
	}
	srv.kill()
	var ended struct {
		Ended    bool
		Status   string
		Messages []uiMessage
	}
	line(t, sc, stderr, &ended)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the kill phase: %v\n%s", err, stderr)
	}
	want := strings.Join(pacedWords, "")
	if cut := ended.Messages[len(ended.Messages)-1].text(); !ended.Ended || ended.Status != "error" || !strings.HasPrefix(want, cut) || cut == want {
		t.Fatalf("the cut stream: status %q, text %q", ended.Status, cut)
	}
	kept, _ := json.Marshal(ended.Messages)
	return string(kept), streaming.Messages[1]
}

// wantResumed resumes the chat on the server at url with the messages a page kept, and checks
// that it ends with the run's whole reply once, in the message the cut stream had begun, and that
// the session holds it once.
func wantResumed(t *testing.T, url, key, chatID, kept string, partial uiMessage) {
	t.Helper()
	cmd, sc, stderr := aiScript(t, url, key, chatID, "resume", "MESSAGES="+kept)
	type result struct {
		Status, Error string
		Messages      []uiMessage
	}
	var resumed, again result
	line(t, sc, stderr, &resumed)
	line(t, sc, stderr, &again)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the resume phase: %v\n%s", err, stderr)
	}
	want := strings.Join(pacedWords, "")
	if resumed.Status != "ready" || len(resumed.Messages) != 2 || resumed.Messages[1].Role != "assistant" {
		t.Fatalf("resumed: status %q (%s), %d messages", resumed.Status, resumed.Error, len(resumed.Messages))
	}
	final := resumed.Messages[1]
	if final.text() != want || final.ID != partial.ID || !strings.HasPrefix(final.ID, "run_") {
		t.Fatalf("resumed: message %s with text %q; want %s with %q", final.ID, final.text(), partial.ID, want)
	}
	if again.Status != "ready" || len(again.Messages) != 2 || again.Messages[1].text() != want {
		t.Fatalf("resumed again: %+v", again)
	}
	run := must(t, url, key, "GET", "/v1/runs/"+final.ID, nil, 200).json(t)
	if run["status"] != "succeeded" || run["reply"] != want {
		t.Fatalf("the run: %v %q", run["status"], run["reply"])
	}
	msgs := must(t, url, key, "GET", "/v1/sessions/"+run["session_id"].(string)+"/messages", nil, 200).json(t)["items"].([]any)
	if len(msgs) != 2 || msgs[1].(map[string]any)["content"] != want {
		t.Fatalf("the session holds %d messages: %v", len(msgs), msgs)
	}
}

// TestAISDKClientTool: the AI SDK's Chat with a client tool in the request body: the model's
// call reaches onToolCall, addToolOutput's output goes back with the next request the chat
// sends by itself (sendAutomaticallyWhen), and the run's answer continues the same assistant
// message. A message posted by hand and read with readUIMessageStream gets the next answer,
// which saw the whole history.
func TestAISDKClientTool(t *testing.T) {
	t.Parallel()
	m := historyModel(t)
	data := t.TempDir()
	srv := startServerEnv(t, data, []string{"OPENAI_BASE_URL=" + m.URL + "/v1", "OPENAI_API_KEY=sk-test"}, "--provider", "openai", "--model", "gpt-test")
	key := localKey(t, data)
	cmd, sc, stderr := aiScript(t, srv.url, key, "tool-chat", "tool")
	var out struct {
		First struct {
			Status   string
			Calls    int
			Messages []uiMessage
		}
		Header string
		Wire   uiMessage
	}
	line(t, sc, stderr, &out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the tool phase: %v\n%s", err, stderr)
	}
	msgs := out.First.Messages
	if out.First.Status != "ready" || out.First.Calls != 1 || len(msgs) != 2 {
		t.Fatalf("the tool turn: status %q, %d calls, %d messages", out.First.Status, out.First.Calls, len(msgs))
	}
	var tool string
	for _, p := range msgs[1].Parts {
		if p.Type == "tool-get_weather" {
			tool = p.State + " " + string(p.Output)
		}
	}
	if tool != `output-available "sunny in Oslo"` || msgs[1].text() != "The weather: sunny in Oslo" || !strings.HasPrefix(msgs[1].ID, "run_") {
		t.Fatalf("the assistant message %s: tool part %q, text %q", msgs[1].ID, tool, msgs[1].text())
	}
	if out.Header != "v1" || out.Wire.Role != "assistant" || out.Wire.text() != "You said: Thank you. (2 user messages, 1 tool results)" {
		t.Fatalf("on the wire: header %q, message %+v", out.Header, out.Wire)
	}
}

// TestAISDKApproval: a tool that asks approval (write_file, approval: always) reaches the SDK's
// Chat as a tool part in approval-requested; addToolApprovalResponse and the chat's automatic
// send (lastAssistantMessageIsCompleteWithApprovalResponses) approve it in carryon, one call at
// a time (the scripted model writes its plan, then the file the message asks for): each tool
// runs (the file is written) and its output, and the answer after the last, complete the same
// message.
func TestAISDKApproval(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(file, []byte("providers:\n  offline: {kind: scripted}\nagents:\n  default:\n    provider: offline\n    approval: {write_file: always}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	srv := startServer(t, data, "--agents", file)
	key := localKey(t, data)
	cmd, sc, stderr := aiScript(t, srv.url, key, "approval-chat", "approve", `MESSAGE=Keep a note.
/tool write_file {"path":"note.md","content":"approved\n"}`)
	type part struct {
		Type, ToolName, ToolCallID, State, Text string
		Approval                                *struct {
			ID       string
			Approved *bool
		}
	}
	type message struct {
		ID, Role string
		Parts    []part
	}
	var out struct {
		Asked, Messages []message
		Approvals       int
		Status, Error   string
	}
	line(t, sc, stderr, &out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the approve phase: %v\n%s", err, stderr)
	}
	writes := func(m message) (states []string) {
		for _, p := range m.Parts {
			if p.Type == "dynamic-tool" && p.ToolName == "write_file" {
				s := p.State
				if p.Approval != nil && p.Approval.Approved != nil && *p.Approval.Approved {
					s += "(approved)"
				}
				states = append(states, s)
			}
		}
		return states
	}
	if len(out.Asked) != 2 || strings.Join(writes(out.Asked[1]), " ") != "approval-requested" {
		t.Fatalf("before the approval: write_file parts %q in %+v", writes(out.Asked[1]), out.Asked)
	}
	if out.Status != "ready" || out.Approvals != 2 || len(out.Messages) != 2 || out.Messages[1].ID != out.Asked[1].ID {
		t.Fatalf("after %d approvals: status %q (%s), messages %+v", out.Approvals, out.Status, out.Error, out.Messages)
	}
	final := out.Messages[1]
	if got := strings.Join(writes(final), " "); got != "output-available(approved) output-available(approved)" || final.Parts[len(final.Parts)-1].Type != "text" {
		t.Fatalf("after the approvals: write_file parts %q; the message %+v", got, final)
	}
	sessions := must(t, srv.url, key, "GET", "/v1/sessions?external_id=approval-chat", nil, 200).json(t)["items"].([]any)
	if len(sessions) != 1 {
		t.Fatalf("sessions of the chat: %v", sessions)
	}
	sid := sessions[0].(map[string]any)["id"].(string)
	if b, err := os.ReadFile(filepath.Join(data, "workspaces", sid, "note.md")); err != nil || string(b) != "approved\n" {
		t.Fatalf("the approved write: %q, %v", b, err)
	}
}
