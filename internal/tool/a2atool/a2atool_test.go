package a2atool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/a2atool"
)

// fakeAgent is an A2A agent over httptest: its answer depends on the message's text.
type fakeAgent struct {
	srv    *httptest.Server
	legacy bool
	mu     sync.Mutex
	calls  []string // method and, for a send, the message's contextId and messageId
	auth   []string
	polls  int
}

func newFake(t *testing.T, legacy bool) *fakeAgent {
	f := &fakeAgent{legacy: legacy}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /agents/planner/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		card := map[string]any{"name": "Trip planner", "description": "Plans trips.",
			"skills": []any{map[string]any{"id": "plan", "name": "Plan", "description": "Makes a plan"}}}
		if legacy {
			card["url"] = "/rpc"
			card["protocolVersion"] = "0.3.0"
		} else {
			card["supportedInterfaces"] = []any{map[string]any{"url": "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}}
		}
		json.NewEncoder(w).Encode(card)
	})
	mux.HandleFunc("POST /rpc", f.rpc)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAgent) rpc(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Method string `json:"method"`
		Params struct {
			ID      string `json:"id"`
			Message struct {
				MessageID string `json:"messageId"`
				ContextID string `json:"contextId"`
				Role      string `json:"role"`
				Parts     []struct {
					Kind string `json:"kind"`
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"message"`
		} `json:"params"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	m := req.Params.Message
	f.mu.Lock()
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	if strings.Contains(req.Method, "end") {
		f.calls = append(f.calls, fmt.Sprintf("%s ctx=%s id=%s role=%s", req.Method, m.ContextID, m.MessageID, m.Role))
	} else {
		f.calls = append(f.calls, req.Method+" "+req.Params.ID)
	}
	f.mu.Unlock()
	state := func(s string) string {
		if f.legacy {
			return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(s, "TASK_STATE_")), "_", "-")
		}
		return s
	}
	task := func(id, ctx, st, reply, status string) any {
		t := map[string]any{"id": id, "contextId": ctx, "status": map[string]any{"state": state(st)}}
		if status != "" {
			t["status"].(map[string]any)["message"] = map[string]any{"messageId": "s", "role": "ROLE_AGENT", "parts": []any{map[string]any{"text": status}}}
		}
		if reply != "" {
			t["artifacts"] = []any{map[string]any{"artifactId": "reply", "parts": []any{map[string]any{"text": reply}}}}
		}
		if f.legacy {
			t["kind"] = "task"
			return t
		}
		return map[string]any{"task": t}
	}
	answer := func(result any) {
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": 1, "result": result})
	}
	switch req.Method {
	case "GetTask", "tasks/get":
		f.mu.Lock()
		f.polls++
		done := f.polls >= 2
		f.mu.Unlock()
		if done {
			answer(task(req.Params.ID, "ctx-slow", "TASK_STATE_COMPLETED", "finally", ""))
		} else {
			answer(task(req.Params.ID, "ctx-slow", "TASK_STATE_WORKING", "", ""))
		}
		return
	case "CancelTask", "tasks/cancel":
		answer(task(req.Params.ID, "ctx", "TASK_STATE_CANCELED", "", ""))
		return
	}
	text := ""
	if len(m.Parts) > 0 {
		text = m.Parts[0].Text
	}
	ctx := m.ContextID
	if ctx == "" {
		ctx = "ctx-" + m.MessageID
	}
	switch text {
	case "fail":
		answer(task("t-fail", ctx, "TASK_STATE_FAILED", "", "the model is down"))
	case "input":
		answer(task("t-input", ctx, "TASK_STATE_INPUT_REQUIRED", "", "approve the booking?"))
	case "slow":
		answer(task("t-slow", ctx, "TASK_STATE_WORKING", "", ""))
	case "hang":
		<-r.Context().Done()
	case "rpcerr":
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": 1, "error": map[string]any{"code": -32001, "message": "context not found"}})
	case "http500":
		http.Error(w, "upstream exploded", http.StatusBadGateway)
	default:
		answer(task("t-"+m.MessageID, ctx, "TASK_STATE_COMPLETED", "reply to "+text+" in "+ctx, "done"))
	}
}

// journal is a tool.Journal over the results of earlier calls, as the engine's reads the
// session's journal.
type journal struct{ last string }

func (j *journal) LastFingerprint(context.Context) (string, error) { return j.last, nil }

func newAgent(t *testing.T, url string, timeout time.Duration) (*a2atool.Agent, tool.Tool) {
	t.Helper()
	a, err := a2atool.New(a2atool.Config{Name: "planner", URL: url, Headers: map[string]string{"Authorization": "Bearer k"}, CallTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := a.Tools(t.Context())
	if err != nil || len(tools) != 1 {
		t.Fatalf("Tools = %v, %v", tools, err)
	}
	return a, tools[0]
}

func call(t *testing.T, tl tool.Tool, j *journal, key, msg string) (tool.Result, error) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"message": msg})
	res, err := tl.Call(t.Context(), tool.Call{Args: args, IdempotencyKey: key, Journal: j})
	if res.FingerprintAfter != "" {
		j.last = res.FingerprintAfter
	}
	return res, err
}

// TestSendAndContinue: the tool is described by the card, is unsafe, sends the message with
// the call's idempotency key as its messageId and the key as a bearer token, and returns the
// reply; the contextId goes into the journal and the next call sends it.
func TestSendAndContinue(t *testing.T) {
	t.Parallel()
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			f := newFake(t, legacy)
			_, tl := newAgent(t, f.srv.URL+"/agents/planner", 0)
			if tl.Name() != "planner__send_message" || tl.Effect() != carryon.EffectUnsafe ||
				!strings.Contains(tl.Description(), "Plans trips.") || !strings.Contains(tl.Description(), "Plan (Makes a plan)") {
				t.Fatalf("tool %s %s %q", tl.Name(), tl.Effect(), tl.Description())
			}
			j := &journal{}
			res, err := call(t, tl, j, "run_1/1/0", "hello")
			if err != nil || res.Content != "reply to hello in ctx-run_1/1/0" || res.FingerprintBefore != "" || res.FingerprintAfter != "a2a-context:ctx-run_1/1/0" {
				t.Fatalf("first call = %+v, %v", res, err)
			}
			res, err = call(t, tl, j, "run_2/1/0", "again")
			if err != nil || res.Content != "reply to again in ctx-run_1/1/0" || res.FingerprintBefore != "a2a-context:ctx-run_1/1/0" {
				t.Fatalf("second call = %+v, %v", res, err)
			}
			method, role := "SendMessage", "ROLE_USER"
			if legacy {
				method, role = "message/send", "user"
			}
			want := []string{method + " ctx= id=run_1/1/0 role=" + role, method + " ctx=ctx-run_1/1/0 id=run_2/1/0 role=" + role}
			if strings.Join(f.calls, "|") != strings.Join(want, "|") || f.auth[0] != "Bearer k" {
				t.Fatalf("calls %q (auth %q), want %q", f.calls, f.auth, want)
			}
		})
	}
}

// TestRemoteFailures: a failed task, one that needs input (then canceled), a JSON-RPC error and
// an HTTP error are tool errors that say what the agent said; a task still working is followed
// until it completes.
func TestRemoteFailures(t *testing.T) {
	t.Parallel()
	f := newFake(t, false)
	_, tl := newAgent(t, f.srv.URL+"/agents/planner/.well-known/agent-card.json", 0)
	for msg, want := range map[string]string{
		"fail":    "A2A agent planner's task t-fail ended failed: the model is down",
		"input":   "A2A agent planner needs input this tool cannot give (task t-input is input-required; it was canceled): approve the booking?",
		"rpcerr":  "A2A agent planner answered SendMessage with error -32001: context not found",
		"http500": "A2A agent planner answered SendMessage with HTTP 502: upstream exploded",
	} {
		res, err := call(t, tl, &journal{}, "k-"+msg, msg)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %+v, %v; want the error %q", msg, res, err, want)
		}
	}
	if !strings.Contains(strings.Join(f.calls, "|"), "CancelTask t-input") {
		t.Errorf("the input-required task was not canceled: %q", f.calls)
	}
	res, err := call(t, tl, &journal{}, "k-slow", "slow")
	if err != nil || res.Content != "finally" || res.FingerprintAfter != "a2a-context:ctx-slow" {
		t.Fatalf("slow = %+v, %v", res, err)
	}
}

// TestUnreachableAndTimeout: an agent whose card cannot be read still offers its tool, whose
// calls are tool errors saying so (and Check says it); a call past call_timeout is a tool error
// saying the message may have been acted on.
func TestUnreachableAndTimeout(t *testing.T) {
	t.Parallel()
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	a, tl := newAgent(t, url, 0)
	if err := a.Check(t.Context()); err == nil || !strings.Contains(err.Error(), "its agent card at "+url+"/.well-known/agent-card.json cannot be read") {
		t.Fatalf("Check = %v", err)
	}
	if _, err := call(t, tl, &journal{}, "k", "hello"); err == nil || !strings.HasPrefix(err.Error(), "A2A agent planner cannot be reached, nothing was sent: its agent card at") {
		t.Fatalf("call of an unreachable agent: %v", err)
	}

	f := newFake(t, false)
	_, tl = newAgent(t, f.srv.URL+"/agents/planner", 300*time.Millisecond)
	start := time.Now()
	_, err := call(t, tl, &journal{}, "k", "hang")
	if err == nil || !strings.Contains(err.Error(), "did not answer within 300ms; the message may or may not have been acted on") {
		t.Fatalf("hung call: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the hung call took %s", d)
	}
}
