package openaiapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// items is a request's input as a list of items.
func items(list ...responses.ResponseInputItemUnionParam) responses.ResponseNewParamsInputUnion {
	return responses.ResponseNewParamsInputUnion{OfInputItemList: list}
}

// userItem is a user's message item.
func userItem(text string) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemParamOfMessage(text, responses.EasyInputMessageRoleUser)
}

// outputItem answers call id with output, as an item of a longer input.
func outputItem(callID, output string) responses.ResponseInputItemUnionParam {
	item := responses.ResponseInputItemParamOfFunctionCallOutput(output)
	item.OfFunctionCallOutput.CallID = openai.String(callID)
	return item
}

// A stateless client (no conversation, no previous_response_id: the whole history in input each
// time, as the OpenAI Agents SDK in session mode sends it) runs a function tool itself and sends
// the history back with the function_call and its function_call_output: the model continues
// after the output, as OpenAI's does, rather than the request being refused for not ending with
// a user's message.
func TestResponseStatelessFunctionCallOutput(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.aliceKey)
	ctx := context.Background()
	tools := []responses.ToolUnionParam{weatherTool}
	r1, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: items(userItem("what is the weather?")), Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	call := r1.Output[0]
	if call.Type != "function_call" || call.CallID != "call_w1" {
		t.Fatalf("r1's output = %s", r1.RawJSON())
	}
	// The call as the client sends it back: the output item with its id and status.
	fc := responses.ResponseInputItemParamOfFunctionCall(call.Arguments.OfString, call.CallID, call.Name)
	fc.OfFunctionCall.ID = openai.String(call.ID)
	fc.OfFunctionCall.Status = responses.ResponseFunctionToolCallStatusCompleted
	history := []responses.ResponseInputItemUnionParam{userItem("what is the weather?"), fc, outputItem("call_w1", "sunny")}
	r2, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: items(history...), Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if r2.Status != responses.ResponseStatusCompleted || r2.OutputText() != "Done: sunny" || len(r2.Output) != 1 || r2.PreviousResponseID != "" {
		t.Fatalf("r2 = %s", r2.RawJSON())
	}
	if r2.Conversation.ID == "" || r2.Conversation.ID == r1.Conversation.ID {
		t.Fatalf("r2 ran in %q (r1 in %q): a stateless response runs on a session of its own input", r2.Conversation.ID, r1.Conversation.ID)
	}
	// r1's run waited for the call r2 answered itself: nothing will answer it now, so it ended
	// (it waited until the tool-output timeout before), and r1 still reads as it was answered.
	if run, err := e.runs.GetRun(e.alice, r1.ID); err != nil || run.Status != carryon.RunCancelled {
		t.Fatalf("r1's run after r2 = %+v, %v; want cancelled", run, err)
	}
	if again, err := c.Responses.Get(ctx, r1.ID, responses.ResponseGetParams{}); err != nil || again.Status != responses.ResponseStatusCompleted || again.Output[0].CallID != "call_w1" {
		t.Fatalf("r1 read again = %v, %v", again, err)
	}
	// The model was sent the history: the user's message, the call and its result, in order.
	e.model.mu.Lock()
	req := e.model.reqs[len(e.model.reqs)-1]
	e.model.mu.Unlock()
	var roles []string
	for _, m := range req.Messages {
		if m.Role != model.RoleSystem {
			roles = append(roles, string(m.Role))
		}
	}
	if n := len(req.Messages); strings.Join(roles, " ") != "user assistant tool" || len(req.Messages[n-2].ToolCalls) != 1 || req.Messages[n-2].ToolCalls[0].ID != "call_w1" || req.Messages[n-1].Content != "sunny" {
		t.Fatalf("the model was sent %+v", req.Messages)
	}
	// r2's input items are the three items; its session holds them and the answer, no other
	// user message (the run continued after the output).
	in, err := c.Responses.InputItems.List(ctx, r2.ID, responses.InputItemListParams{Order: responses.InputItemListParamsOrderAsc})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Data) != 3 || in.Data[0].Type != "message" || in.Data[1].Type != "function_call" || in.Data[2].Type != "function_call_output" || in.Data[2].Output.OfString != "sunny" {
		t.Fatalf("r2's input items = %s", in.RawJSON())
	}
	v, err := e.sessions.Get(e.alice, r2.Conversation.ID, carryon.GetOptions{Messages: 10})
	if err != nil || len(v.Messages) != 4 || v.Messages[3].Content != "Done: sunny" {
		t.Fatalf("r2's session = %+v, %v", v, err)
	}
	// Streamed, the same request ends in the answer.
	events := collect(t, c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "m", Input: items(history...), Tools: tools}))
	checkSequence(t, events, 0)
	if last := events[len(events)-1]; last.Type != "response.completed" || last.Response.OutputText() != "Done: sunny" {
		t.Fatalf("stream = %s", eventTypes(events))
	}
	// The next turn sends that history, the answer and a new message: the model sees them all.
	answer := responses.ResponseInputItemParamOfMessage("Done: sunny", responses.EasyInputMessageRoleAssistant)
	r3, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: items(append(history, answer, userItem("thanks"))...), Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if r3.OutputText() != "You said: thanks (2 user messages)" {
		t.Fatalf("r3 = %q", r3.OutputText())
	}
}

// The refusals around it keep the OpenAI error shape: a call without its output, an output
// whose call is neither in the input nor waited for, an output mixed with its call and a later
// message (the input must end with the output).
func TestResponseStatelessFunctionCallRefusals(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.aliceKey)
	ctx := context.Background()
	fc := responses.ResponseInputItemParamOfFunctionCall(`{"city":"Oslo"}`, "call_x", "get_weather")
	for name, input := range map[string]responses.ResponseNewParamsInputUnion{
		"a call without its output":       items(userItem("weather?"), fc),
		"an output of no call":            items(userItem("weather?"), outputItem("call_y", "sunny")),
		"an output, then a call":          items(userItem("weather?"), outputItem("call_x", "sunny"), fc),
		"a call and an output of another": items(userItem("weather?"), fc, outputItem("call_y", "sunny")),
	} {
		_, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: input, Tools: []responses.ToolUnionParam{weatherTool}})
		if ae := wantAPIError(t, err, http.StatusBadRequest, carryon.EINVALID); !strings.Contains(ae.RawJSON(), `"param":"input"`) {
			t.Fatalf("%s: error = %s", name, ae.RawJSON())
		}
	}
	list, err := e.sessions.List(e.alice, carryon.SessionFilter{})
	if err != nil || len(list.Items) != 0 {
		t.Fatalf("refusals left sessions: %v, %v", list, err)
	}
}
