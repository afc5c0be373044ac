package aisdk_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
)

// weatherTools is a body's tools with the client tool get_weather.
var weatherTools = map[string]any{"tools": map[string]any{"get_weather": map[string]any{
	"description": "the weather in a city",
	"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
}}}

// assistantWith is the assistant UI message of run with parts, as the AI SDK holds it.
func assistantWith(runID string, parts ...any) map[string]any {
	return map[string]any{"id": runID, "role": "assistant", "parts": append([]any{map[string]any{"type": "step-start"}}, parts...)}
}

// TestClientTool: a client tool the body names is a carryon client tool; the model's call of it
// is a static tool part without output and the stream finishes for tool calls (no resume: 204).
// The next request carries the output in the assistant message, as addToolOutput leaves it;
// the door passes it to the run's tool outputs, and the stream goes on in the same message
// (its id the run id) with the model's answer, without the parts the client holds.
func TestClientTool(t *testing.T) {
	onStores(t, false, func(t *testing.T, e *env) {
		a := e.chat(t, e.aliceKey, "chat-t", "m1", "what is the weather", weatherTools)
		wantStream(t, a)
		if got, want := a.types(), "start start-step tool-input-start tool-input-delta tool-input-available finish-step finish"; got != want {
			t.Fatalf("chunks %q, want %q", got, want)
		}
		in := a.first("tool-input-available")
		if in["toolName"] != "get_weather" || in["toolCallId"] != "call_w1" || in["dynamic"] != nil || in["providerExecuted"] != nil || a.first("finish")["finishReason"] != "tool-calls" {
			t.Fatalf("tool input %v, finish %v", in, a.first("finish"))
		}
		if got, _ := json.Marshal(in["input"]); string(got) != `{"city":"Oslo"}` {
			t.Fatalf("input %s", got)
		}
		run := e.runOf(t, "chat-t")
		if run.Status != carryon.RunRequiresAction || len(run.Tools) != 1 || run.Tools[0].Name != "get_weather" {
			t.Fatalf("run %s with tools %v", run.Status, run.Tools)
		}
		if r := e.do(t, e.aliceKey, "GET", "/v1/ai-sdk/chat/chat-t/stream", nil); r.status != 204 {
			t.Fatalf("resume of a run waiting for the client: %d", r.status)
		}
		call := map[string]any{"type": "tool-get_weather", "toolCallId": "call_w1", "state": "input-available", "input": map[string]any{"city": "Oslo"}}
		body := func(call map[string]any) map[string]any {
			return map[string]any{"id": "chat-t", "trigger": "submit-message", "messages": []any{userMsg("m1", "what is the weather"), assistantWith(run.ID, call)}}
		}
		// Without the output: refused, nothing changes.
		wantProblem(t, e.do(t, e.aliceKey, "POST", "/v1/ai-sdk/chat", body(call)), 400, "no output for the call call_w1")
		if r := e.runOf(t, "chat-t"); r.Status != carryon.RunRequiresAction {
			t.Fatalf("run %s after a refused output", r.Status)
		}
		call["state"], call["output"] = "output-available", map[string]any{"temp": 3}
		b := e.do(t, e.aliceKey, "POST", "/v1/ai-sdk/chat", body(call))
		wantStream(t, b)
		// The output comes back as the run stored it (a replay of the message shows it too),
		// then the model's next step.
		if got, want := b.types(), "start tool-output-available start-step text-start text-delta text-end finish-step finish"; got != want {
			t.Fatalf("after the output: %q, want %q", got, want)
		}
		if out := b.first("tool-output-available"); out["toolCallId"] != "call_w1" || out["output"] != `{"temp":3}` {
			t.Fatalf("the output: %v", out)
		}
		if b.chunks[0]["messageId"] != run.ID || b.text() != `Done: {"temp":3}` || b.first("finish")["finishReason"] != "stop" {
			t.Fatalf("after the output: %v, %q", b.chunks[0], b.text())
		}
		// The same output posted again answers nothing new: the run waits for none.
		wantProblem(t, e.do(t, e.aliceKey, "POST", "/v1/ai-sdk/chat", body(call)), 409, "no run waiting")
	})
}

// TestApproval: carryon's own tool that asks approval is a dynamic, provider-executed tool part
// with a tool-approval-request (the approval id is carryon's action id); the approval response
// in the next request approves it (the tool runs, its output and the working memory it changed
// as data-working-memory follow) or rejects it (tool-output-denied).
func TestApproval(t *testing.T) {
	onStores(t, true, func(t *testing.T, e *env) {
		for _, approved := range []bool{true, false} {
			chatID := "chat-a-" + map[bool]string{true: "yes", false: "no"}[approved]
			a := e.chat(t, e.aliceKey, chatID, "m1", "take a memo", nil)
			wantStream(t, a)
			if got, want := a.types(), "start start-step text-start text-delta text-end tool-input-start tool-input-delta tool-input-available tool-approval-request finish-step finish"; got != want {
				t.Fatalf("chunks %q, want %q", got, want)
			}
			req := a.first("tool-approval-request")
			run := e.runOf(t, chatID)
			if run.Status != carryon.RunWaitingApproval || req["approvalId"] != run.PendingAction.ID || req["toolCallId"] != "call_m1" || a.first("tool-input-start")["dynamic"] != true {
				t.Fatalf("run %s (%v), approval request %v, input %v", run.Status, run.PendingAction, req, a.first("tool-input-start"))
			}
			part := map[string]any{"type": "dynamic-tool", "toolName": "update_working_memory", "toolCallId": "call_m1", "state": "approval-responded",
				"input": map[string]any{"patch": map[string]any{"goal": "ship"}}, "approval": map[string]any{"id": req["approvalId"], "approved": approved, "reason": "not now"}}
			b := e.do(t, e.aliceKey, "POST", "/v1/ai-sdk/chat", map[string]any{"id": chatID, "messages": []any{userMsg("m1", "take a memo"), assistantWith(run.ID, part)}})
			wantStream(t, b)
			wm, err := e.sessions.GetWorkingMemory(e.alice, run.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			if approved {
				if got, want := b.types(), "start tool-output-available data-working-memory start-step text-start text-delta text-end finish-step finish"; got != want {
					t.Fatalf("approved: %q, want %q", got, want)
				}
				d, _ := json.Marshal(b.first("data-working-memory"))
				if !strings.Contains(string(d), `"goal":"ship"`) || !strings.Contains(string(d), `"id":"working-memory"`) || wm.WorkingMemory["goal"] != "ship" {
					t.Fatalf("working memory part %s; session memory %v", d, wm.WorkingMemory)
				}
			} else {
				if b.first("tool-output-denied")["toolCallId"] != "call_m1" || b.first("data-working-memory") != nil || wm.WorkingMemory["goal"] != nil {
					t.Fatalf("rejected: %q; memory %v", b.types(), wm.WorkingMemory)
				}
			}
		}
	})
}

// TestWorkingMemoryPart: a step that changes the working memory streams it as a
// data-working-memory part.
func TestWorkingMemoryPart(t *testing.T) {
	onStores(t, false, func(t *testing.T, e *env) {
		a := e.chat(t, e.aliceKey, "chat-w", "m1", "take a memo", nil)
		wantStream(t, a)
		d := a.first("data-working-memory")
		if d == nil || d["data"].(map[string]any)["goal"] != "ship" || a.first("tool-output-available")["dynamic"] != true {
			t.Fatalf("chunks %q: %v", a.types(), d)
		}
	})
}
