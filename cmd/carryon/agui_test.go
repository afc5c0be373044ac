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
	"reflect"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/model/modeltest"
	"github.com/carryon-hub/carryon/internal/npmtest"
)

// aguiModel is an OpenAI-compatible model server: "remember X" calls update_working_memory
// (goal X, notes deleted, a plan); "weather" with get_weather offered calls it; after a tool
// result it answers "The weather: " and it, or "Noted." after its own memory tool; otherwise
// "You said: <text> (<n> user messages)".
func aguiModel(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct {
				Role       string `json:"role"`
				Content    any    `json:"content"`
				ToolCallID string `json:"tool_call_id"`
			} `json:"messages"`
			Tools []struct {
				Function struct{ Name string } `json:"function"`
			} `json:"tools"`
		}
		json.Unmarshal(body, &req)
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": ""}, nil))
		call := func(id, name, args string) {
			s.Data(modeltest.OpenAIChunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": 0, "id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args},
			}}}, nil))
			s.Data(modeltest.OpenAIChunk(map[string]any{}, "tool_calls"))
			s.Done()
		}
		say := func(text string) {
			for _, w := range strings.SplitAfter(text, " ") {
				s.Data(modeltest.OpenAIChunk(map[string]any{"content": w}, nil))
			}
			s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
			s.Done()
		}
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" {
			if req.Messages[n-1].ToolCallID == "call_m" {
				say("Noted.")
			} else {
				say("The weather: " + textOf(req.Messages[n-1].Content))
			}
			return
		}
		users, last := 0, ""
		for _, m := range req.Messages {
			if m.Role == "user" {
				users, last = users+1, textOf(m.Content)
			}
		}
		offered := map[string]bool{}
		for _, tl := range req.Tools {
			offered[tl.Function.Name] = true
		}
		switch {
		case strings.HasPrefix(last, "remember ") && offered["update_working_memory"]:
			goal, _ := json.Marshal(strings.TrimPrefix(last, "remember "))
			call("call_m", "update_working_memory", `{"patch":{"goal":`+string(goal)+`,"notes":null,"plan":[{"title":"a/b~c","status":"todo"}]}}`)
		case strings.Contains(last, "weather") && offered["get_weather"]:
			call("call_w", "get_weather", `{"city":"Oslo"}`)
		default:
			say("You said: " + last + " (" + itoa(users) + " user messages)")
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestAGUIClientOnServe: the AG-UI client (@ag-ui/client's HttpAgent, pinned in .ci/npm) runs
// against `carryon serve`: a new thread whose run changes the working memory (the STATE_SNAPSHOT
// and STATE_DELTA events, applied with fast-json-patch, equal GET /v1/sessions/{id}/memory), a
// second turn that appends only its new message, a client tool round trip (the call, then the
// tool message of the next input as its output), and another user's threadId refused with 404.
func TestAGUIClientOnServe(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		npmtest.Missing(t, "node is not on PATH")
	}
	// .ci/npm: the script's imports resolve from there (an ES module resolves them from where it
	// runs, not from NODE_PATH), so it is sent on stdin to a node started in that directory.
	npmDir := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(npmtest.File(t, "@ag-ui/client/package.json")))))
	npmtest.File(t, "fast-json-patch/package.json")
	m := aguiModel(t)
	data := t.TempDir()
	srv := startServerEnv(t, data, []string{"OPENAI_BASE_URL=" + m.URL + "/v1", "OPENAI_API_KEY=sk-test"}, "--provider", "openai", "--model", "gpt-test")
	key := localKey(t, data)
	bob := addUser(t, data, "bob")
	cmd := exec.Command("node", "--input-type=module", "-")
	cmd.Dir = npmDir
	cmd.Stdin = bytes.NewReader(mustRead(t, filepath.Join("testdata", "agui", "agui.mjs")))
	cmd.Env = append(os.Environ(), "CARRYON_URL="+srv.url, "CARRYON_KEY="+key, "BOB_KEY="+bob)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the AG-UI script: %v\n%s\nserver logs:\n%s", err, stderr.String(), srv.logs)
	}
	var out struct {
		FirstTypes            []string
		FirstText, SecondText string
		Session               string
		FirstSnapshot         map[string]any
		Patched, Native       map[string]any
		AgentState            map[string]any
		Pending               []string
		ToolName, Weather     string
		FourthLast            string
		Messages              []string
		Bob                   struct {
			Status int
			Code   string
			Events []string
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("the script printed %q: %v (stderr %s)", stdout.String(), err, stderr.String())
	}
	types := strings.Join(out.FirstTypes, " ")
	for _, want := range []string{"RUN_STARTED STATE_SNAPSHOT TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END", "STATE_DELTA", "TOOL_CALL_RESULT", "TEXT_MESSAGE_START", "TEXT_MESSAGE_END MESSAGES_SNAPSHOT RUN_FINISHED"} {
		if !strings.Contains(types, want) {
			t.Fatalf("the first run's events %s lack %s", types, want)
		}
	}
	if out.FirstText != "Noted." {
		t.Fatalf("first text %q", out.FirstText)
	}
	if out.FirstSnapshot["notes"] != "draft" {
		t.Fatalf("the first STATE_SNAPSHOT %v lacks the input's state", out.FirstSnapshot)
	}
	if out.Native["goal"] != "ship it" || out.Native["notes"] != nil || !reflect.DeepEqual(out.Patched, out.Native) || !reflect.DeepEqual(out.AgentState, out.Native) {
		t.Fatalf("the patched snapshot %v, the agent's state %v, GET memory %v", out.Patched, out.AgentState, out.Native)
	}
	if out.SecondText != "You said: hello (2 user messages)" {
		t.Fatalf("second text %q: the thread's messages were appended again, or not seen", out.SecondText)
	}
	if out.ToolName != "get_weather" || !reflect.DeepEqual(out.Pending, []string{"call_w"}) || out.Weather != "The weather: sunny in Oslo" || out.FourthLast != "RUN_FINISHED" {
		t.Fatalf("the client tool: %s, pending %v, then %q (%s)", out.ToolName, out.Pending, out.Weather, out.FourthLast)
	}
	want := []string{"user:remember ship it", "assistant:", "tool:", "assistant:Noted.", "user:hello", "assistant:You said: hello (2 user messages)",
		"user:what is the weather?", "assistant:", "tool:sunny in Oslo", "assistant:The weather: sunny in Oslo"}
	if len(out.Messages) != len(want) {
		t.Fatalf("the session's messages %q, want %q", out.Messages, want)
	}
	for i, w := range want {
		if !strings.HasPrefix(out.Messages[i], w) {
			t.Fatalf("the session's messages %q, want %q", out.Messages, want)
		}
	}
	if out.Bob.Status != 404 || out.Bob.Code != "not_found" || out.Bob.Events != nil {
		t.Fatalf("bob on alice's thread: %+v", out.Bob)
	}
}

// postAGUI sends an AG-UI input to the server's POST /v1/ag-ui with key. Not through
// http.DefaultTransport: it checks answers against the native API's OpenAPI document, which does
// not describe this door.
func postAGUI(t *testing.T, url, key string, in any) response {
	t.Helper()
	b, _ := json.Marshal(in)
	req, _ := http.NewRequest("POST", url+"/v1/ag-ui", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{res.StatusCode, res.Header, body}
}

// aguiEvents are the events of an AG-UI answer (its data lines), failing the test on any other
// answer.
func aguiEvents(t *testing.T, r response) []map[string]any {
	t.Helper()
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("answer %d %s", r.status, r.body)
	}
	var out []map[string]any
	for _, line := range strings.Split(string(r.body), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var ev map[string]any
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			out = append(out, ev)
		}
	}
	return out
}

// aguiDigest is what two answers of one AG-UI run must share: the events but for how the text
// was cut into deltas (a live stream sends the model's deltas as they come, a replay the stored
// ones) and the state events (STATE_SNAPSHOT is the working memory when the answer begins, so a
// repeat's is the run's last, and its deltas are the changes after that), and the text.
func aguiDigest(events []map[string]any) string {
	var kept []map[string]any
	text := ""
	for _, ev := range events {
		switch ev["type"] {
		case "TEXT_MESSAGE_CONTENT":
			text += ev["delta"].(string)
			continue
		case "STATE_SNAPSHOT", "STATE_DELTA":
			continue
		}
		kept = append(kept, ev)
	}
	b, _ := json.Marshal(kept)
	return text + "\n" + string(b)
}

// TestAGUIRepeatAfterCrash: an AG-UI input sent again with its runId, at once and after a kill -9
// and a restart on the same data, streams the same run again: the same events and text, one
// run, the messages and the state's write stored once.
func TestAGUIRepeatAfterCrash(t *testing.T) {
	t.Parallel()
	testAGUIRepeatAfterCrash(t, nil)
}

// TestAGUIRepeatAfterCrashPostgres is TestAGUIRepeatAfterCrash on PostgreSQL.
func TestAGUIRepeatAfterCrashPostgres(t *testing.T) {
	t.Parallel()
	testAGUIRepeatAfterCrash(t, []string{"--db", pgDatabase(t)})
}

func testAGUIRepeatAfterCrash(t *testing.T, args []string) {
	data := t.TempDir()
	srv := startServer(t, data, args...)
	key := localKey(t, data)
	in := map[string]any{"threadId": "crash-thread", "runId": "crash-run-1", "state": map[string]any{"k": "v"},
		"messages": []any{map[string]any{"id": "u1", "role": "user", "content": "hello"}}}
	first := aguiEvents(t, postAGUI(t, srv.url, key, in))
	if first[len(first)-1]["type"] != "RUN_FINISHED" {
		t.Fatalf("first answer %v", first)
	}
	snap := first[len(first)-2]["messages"].([]any)
	session, _, _ := strings.Cut(snap[0].(map[string]any)["id"].(string), ":")
	check := func(when string, events []map[string]any) {
		t.Helper()
		if got, want := aguiDigest(events), aguiDigest(first); got != want {
			t.Fatalf("%s: %s\nwant %s", when, got, want)
		}
		runs := must(t, srv.url, key, "GET", "/v1/sessions/"+session+"/runs", nil, 200).json(t)["items"].([]any)
		msgs := must(t, srv.url, key, "GET", "/v1/sessions/"+session+"/messages", nil, 200).json(t)["items"].([]any)
		mem := must(t, srv.url, key, "GET", "/v1/sessions/"+session+"/memory", nil, 200).json(t)
		var state any
		for _, ev := range events {
			if ev["type"] == "STATE_SNAPSHOT" {
				state = ev["snapshot"]
			}
		}
		if when != "the first answer" && !reflect.DeepEqual(state, mem["working_memory"]) {
			t.Fatalf("%s: STATE_SNAPSHOT %v, the memory %v", when, state, mem["working_memory"])
		}
		// The input's state and the run's own change: two revisions, whatever was repeated.
		if len(runs) != 1 || len(msgs) != len(snap) || mem["memory_version"] != float64(2) {
			t.Fatalf("%s: %d runs, %d messages (want %d), memory %v", when, len(runs), len(msgs), len(snap), mem)
		}
	}
	check("the first answer", first)
	check("the repeat", aguiEvents(t, postAGUI(t, srv.url, key, in)))
	srv.kill()
	srv = startServer(t, data, args...)
	check("the repeat after the restart", aguiEvents(t, postAGUI(t, srv.url, key, in)))
}
