package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBudgetStopOnEveryDoor runs, on every front door that starts runs, a run of a user whose day
// budget is spent, and checks that each door says so in its own words: the budget, what was spent
// and the limit, and how to go on, never as a call waiting for approval or a crash. An approval
// through the door (where it takes one) goes on with the same run, which stops at the budget
// again.
func TestBudgetStopOnEveryDoor(t *testing.T) {
	t.Parallel()
	srv, data := startBudgetServer(t)
	admin := localKey(t, data)
	key := addUser(t, data, "spender")
	must(t, srv.url, admin, "PUT", "/v1/users/spender/budget", map[string]any{"day": map[string]any{"tokens": 1}}, 200)
	// The first call is under the budget; the run stops before its second.
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	rid := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "Write a haiku about the sea"}, 202).json(t)["id"].(string)
	if r := waitRun(t, srv, key, rid); r["status"] != "waiting_approval" || r["budget_stop"] == nil {
		t.Fatalf("native run = %v", r)
	}
	h := &repeatHub{t: t, srv: srv}
	budgetWords := func(door, text string) {
		t.Helper()
		if !strings.Contains(text, "budget exceeded") || !strings.Contains(text, "1 tokens") {
			t.Errorf("%s: the answer does not say the budget was exceeded with its limit: %s", door, text)
		}
		if strings.Contains(text, "approval of") || strings.Contains(text, "wants to call") || strings.Contains(text, "a crash") || strings.Contains(text, "tool_approval") {
			t.Errorf("%s: the answer words the budget stop as a call waiting for approval or a crash: %s", door, text)
		}
	}

	// MCP: start_run's result names the stop and says what to do.
	sid2 := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	res := mcpOK(t, h.session(key), "start_run", map[string]any{"session_id": sid2, "message": "Go on"})
	b, _ := json.Marshal(res)
	budgetWords("mcp start_run", string(b))
	if res["budget_stop"] == nil {
		t.Errorf("mcp start_run: no budget_stop in %s", b)
	}

	// AG-UI: the run finishes with an interrupt whose reason is the budget.
	in := map[string]any{"threadId": "thread-budget", "runId": "run-budget", "tools": []any{}, "context": []any{}, "state": map[string]any{},
		"forwardedProps": map[string]any{}, "messages": []any{map[string]any{"id": "m1", "role": "user", "content": "hello"}}}
	evs := aguiEvents(t, postAGUI(t, srv.url, key, in))
	last := evs[len(evs)-1]
	b, _ = json.Marshal(last)
	if last["type"] != "RUN_FINISHED" || !strings.Contains(string(b), `"reason":"budget_exceeded"`) {
		t.Errorf("AG-UI: the last event is not an interrupt for the budget: %s", b)
	}
	budgetWords("ag-ui", string(b))
	// Resuming the interrupt approves the stop: the same run goes on and stops at the budget again.
	intr := last["outcome"].(map[string]any)["interrupts"].([]any)[0].(map[string]any)
	in["runId"], in["messages"], in["resume"] = "run-budget-2", []any{}, []any{map[string]any{"interruptId": intr["id"], "status": "resolved"}}
	evs = aguiEvents(t, postAGUI(t, srv.url, key, in))
	b, _ = json.Marshal(evs[len(evs)-1])
	if !strings.Contains(string(b), `"reason":"budget_exceeded"`) {
		t.Errorf("AG-UI: resuming the budget interrupt ended with %s, want the budget stop again", b)
	}

	// The AI SDK: the stream carries the stop as a data part and finishes for another reason than
	// tool calls; a new message to the paused chat is refused with the budget's words.
	chat := map[string]any{"id": "chat-budget", "trigger": "submit-message", "messages": []any{map[string]any{"id": "m1", "role": "user",
		"parts": []any{map[string]any{"type": "text", "text": "hello"}}}}}
	r := h.compat(request{method: "POST", path: "/v1/ai-sdk/chat", key: key, body: chat})
	if r.status != 200 || !strings.Contains(string(r.body), `"type":"data-budget-stop"`) || strings.Contains(string(r.body), `"finishReason":"tool-calls"`) {
		t.Errorf("AI SDK chat: %d %s", r.status, r.body)
	}
	budgetWords("ai-sdk stream", string(r.body))
	chat["messages"] = append(chat["messages"].([]any), map[string]any{"id": "m2", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "more"}}})
	r = h.compat(request{method: "POST", path: "/v1/ai-sdk/chat", key: key, body: chat})
	if r.status != 409 {
		t.Errorf("AI SDK chat, a message to a chat paused at a budget: %d %s", r.status, r.body)
	}
	budgetWords("ai-sdk 409", string(r.body))

	// A2A: the task asks for input with the budget's words and a data part; "approve" goes on
	// with the same run, which stops at the budget again.
	send := func(msg map[string]any) map[string]any {
		t.Helper()
		r := h.compat(request{method: "POST", path: "/a2a", key: key, body: map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
			"params": map[string]any{"message": msg, "configuration": map[string]any{"blocking": true}}}})
		var out map[string]any
		if err := json.Unmarshal(r.body, &out); err != nil || out["result"] == nil {
			t.Fatalf("A2A SendMessage: %d %s", r.status, r.body)
		}
		res := out["result"].(map[string]any)
		if task, ok := res["task"].(map[string]any); ok {
			return task
		}
		return res
	}
	task := send(map[string]any{"messageId": "m-budget", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hello"}}})
	b, _ = json.Marshal(task["status"])
	if !strings.Contains(string(b), "INPUT_REQUIRED") && !strings.Contains(string(b), "input-required") || !strings.Contains(string(b), `"budget_stop"`) {
		t.Errorf("A2A task status = %s, want input required with the budget stop", b)
	}
	budgetWords("a2a", string(b))
	again := send(map[string]any{"messageId": "m-budget-2", "role": "ROLE_USER", "taskId": task["id"], "contextId": task["contextId"], "parts": []any{map[string]any{"text": "approve"}}})
	if again["id"] != task["id"] {
		t.Errorf("A2A approve answered task %v, want %v", again["id"], task["id"])
	}
	b, _ = json.Marshal(again["status"])
	budgetWords("a2a after approve", string(b))
	run := must(t, srv.url, key, "GET", "/v1/runs/"+task["id"].(string), nil, 200).json(t)
	if run["status"] != "waiting_approval" || run["budget_stop"] == nil || run["attempt"].(float64) < 2 {
		t.Errorf("the A2A task's run after approve = %v, want stopped at the budget again on a later attempt", run)
	}

	// OpenAI Responses.
	// OpenAI Responses: the response ends incomplete for the budget (it waited in_progress, with
	// nothing saying why, before).
	resp := h.compat(request{method: "POST", path: "/v1/responses", key: key, body: map[string]any{"model": "default", "input": "hello"}})
	var ro map[string]any
	if err := json.Unmarshal(resp.body, &ro); err != nil || ro["status"] != "incomplete" ||
		!strings.Contains(string(resp.body), `"incomplete_details":{"reason":"budget_exceeded"}`) {
		t.Errorf("POST /v1/responses at a spent budget: %d %s", resp.status, resp.body)
	}

	// The native API: reject ends a run stopped at a budget, cancelled (before, it queued it again).
	rej := must(t, srv.url, key, "POST", "/v1/runs/"+rid+"/approve", map[string]any{"decision": "reject", "reason": "enough"}, 200).json(t)
	if rej["status"] != "cancelled" || !strings.Contains(rej["error"].(string), "rejected") {
		t.Errorf("rejecting a budget stop = %v, want the run cancelled", rej)
	}
}
