package openaiapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/conversations"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// textInput is a request's input as a string.
func textInput(s string) responses.ResponseNewParamsInputUnion {
	return responses.ResponseNewParamsInputUnion{OfString: openai.String(s)}
}

// inConversation continues conversation id.
func inConversation(id string) responses.ResponseNewParamsConversationUnion {
	return responses.ResponseNewParamsConversationUnion{OfString: openai.String(id)}
}

// storedReply is the content of the session's last message.
func (e *env) storedReply(t *testing.T, sessionID string) string {
	t.Helper()
	v, err := e.sessions.Get(e.alice, sessionID, carryon.GetOptions{Messages: 1})
	if err != nil || len(v.Messages) == 0 {
		t.Fatalf("session %s: %v", sessionID, err)
	}
	return v.Messages[len(v.Messages)-1].Content
}

func TestResponseCreateRetrieveInputItems(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.aliceKey)
	ctx := context.Background()
	resp, err := c.Responses.New(ctx, responses.ResponseNewParams{
		Model: shared.ResponsesModel("gpt-test"), Input: textInput("hello there"),
		Instructions: openai.String("Be brief."), Metadata: shared.Metadata{"topic": "greeting"},
		Temperature: openai.Float(0.5), Include: []responses.ResponseIncludable{},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "You said: hello there (1 user messages)"
	if resp.Status != responses.ResponseStatusCompleted || resp.OutputText() != want || resp.Object != "response" {
		t.Fatalf("response = %s %q, want completed %q", resp.Status, resp.OutputText(), want)
	}
	if resp.Model != "gpt-test" || resp.Instructions.OfString != "Be brief." || resp.Metadata["topic"] != "greeting" || resp.Temperature != 0.5 {
		t.Fatalf("the request is not echoed: model %q, instructions %q, metadata %v, temperature %v", resp.Model, resp.Instructions.OfString, resp.Metadata, resp.Temperature)
	}
	if resp.Usage.InputTokens != 7 || resp.Usage.TotalTokens != resp.Usage.InputTokens+resp.Usage.OutputTokens {
		t.Fatalf("usage = %+v", resp.Usage)
	}
	conv := resp.Conversation.ID
	if !strings.HasPrefix(conv, carryon.SessionIDPrefix) || e.storedReply(t, conv) != want {
		t.Fatalf("conversation %q: its last message is not the reply", conv)
	}
	got, err := c.Responses.Get(ctx, resp.ID, responses.ResponseGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	if got.RawJSON() != resp.RawJSON() {
		t.Fatalf("retrieve answers another response:\n%s\nwant\n%s", got.RawJSON(), resp.RawJSON())
	}
	page, err := c.Responses.InputItems.List(ctx, resp.ID, responses.InputItemListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].Type != "message" || page.Data[0].Role != "user" || itemText(page.Data[0].RawJSON()) != "hello there" {
		t.Fatalf("input items = %s", page.RawJSON())
	}
	// The conversation holds the turn: the user's message and the reply.
	items, err := c.Conversations.Items.List(ctx, conv, conversationsItemListAsc())
	if err != nil {
		t.Fatal(err)
	}
	if len(items.Data) != 2 || itemText(items.Data[1].RawJSON()) != want {
		t.Fatalf("conversation items = %s", items.RawJSON())
	}
	// A model that names a profile selects it; another name is recorded, and the default runs.
	run, err := e.runs.GetRun(e.alice, resp.ID)
	if err != nil || run.Agent != carryon.DefaultAgent {
		t.Fatalf("run = %+v, %v", run, err)
	}
	rev, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "reviewer", Input: textInput("review")})
	if err != nil {
		t.Fatal(err)
	}
	if run, err := e.runs.GetRun(e.alice, rev.ID); err != nil || run.Agent != "reviewer" || rev.Model != "reviewer" {
		t.Fatalf("the reviewer's run = %+v, %v (model %q)", run, err, rev.Model)
	}
	// Input items: a list of items, the earlier ones stored before the user's message.
	resp2, err := c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt-test",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("Remember: blue.", responses.EasyInputMessageRoleUser),
			responses.ResponseInputItemParamOfMessage("Noted.", responses.EasyInputMessageRoleAssistant),
			responses.ResponseInputItemParamOfMessage("What colour?", responses.EasyInputMessageRoleUser),
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp2.OutputText() != "You said: What colour? (2 user messages)" {
		t.Fatalf("reply = %q", resp2.OutputText())
	}
	var asc []string
	iter := c.Responses.InputItems.ListAutoPaging(ctx, resp2.ID, responses.InputItemListParams{Order: responses.InputItemListParamsOrderAsc, Limit: openai.Int(1)})
	for iter.Next() {
		asc = append(asc, itemText(iter.Current().RawJSON()))
	}
	if iter.Err() != nil || strings.Join(asc, "|") != "Remember: blue.|Noted.|What colour?" {
		t.Fatalf("input items asc = %q (%v)", asc, iter.Err())
	}
}

// collect reads a stream to its end.
func collect(t *testing.T, s *ssestream.Stream[responses.ResponseStreamEventUnion]) []responses.ResponseStreamEventUnion {
	t.Helper()
	var out []responses.ResponseStreamEventUnion
	for s.Next() {
		out = append(out, s.Current())
	}
	if err := s.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	return out
}

// specEvents are the event types carryon sends, all of them the specification's.
var specEvents = map[string]bool{
	"response.created": true, "response.in_progress": true, "response.output_item.added": true,
	"response.content_part.added": true, "response.output_text.delta": true, "response.output_text.done": true,
	"response.content_part.done": true, "response.output_item.done": true, "response.completed": true,
	"response.failed": true, "response.incomplete": true, "response.function_call_arguments.delta": true,
	"response.function_call_arguments.done": true, "error": true,
}

// checkSequence checks that events are numbered from first on, one by one, of spec types.
func checkSequence(t *testing.T, events []responses.ResponseStreamEventUnion, first int64) {
	t.Helper()
	for i, ev := range events {
		if ev.SequenceNumber != first+int64(i) || !specEvents[ev.Type] {
			t.Fatalf("event %d = %s #%d, want a spec event #%d", i, ev.Type, ev.SequenceNumber, first+int64(i))
		}
	}
}

func TestResponseStreamingAndResume(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.aliceKey)
	ctx := context.Background()
	events := collect(t, c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-test", Input: textInput("stream me")}))
	checkSequence(t, events, 0)
	var deltas strings.Builder
	for _, ev := range events {
		if ev.Type == "response.output_text.delta" {
			deltas.WriteString(ev.Delta)
		}
	}
	first, last := events[0], events[len(events)-1]
	if first.Type != "response.created" || events[1].Type != "response.in_progress" || last.Type != "response.completed" {
		t.Fatalf("stream goes %s, %s … %s", first.Type, events[1].Type, last.Type)
	}
	final := last.Response
	want := "You said: stream me (1 user messages)"
	if deltas.String() != want || final.OutputText() != want || e.storedReply(t, final.Conversation.ID) != want {
		t.Fatalf("deltas joined %q, final %q, want the stored reply %q", deltas.String(), final.OutputText(), want)
	}
	if n := strings.Count(want, " ") + 1; strings.Count(eventTypes(events), "response.output_text.delta") != n {
		t.Fatalf("deltas = %d, want one per model chunk (%d): %s", strings.Count(eventTypes(events), "delta"), n, eventTypes(events))
	}
	// Resume after any event: exactly the rest, byte for byte.
	for _, after := range []int{0, 3, len(events) - 2} {
		rest := collect(t, c.Responses.GetStreaming(ctx, final.ID, responses.ResponseGetParams{StartingAfter: openai.Int(int64(after))}))
		if len(rest) != len(events)-after-1 {
			t.Fatalf("after %d: %d events, want %d", after, len(rest), len(events)-after-1)
		}
		for i, ev := range rest {
			if ev.RawJSON() != events[after+1+i].RawJSON() {
				t.Fatalf("after %d: event %d = %s, want %s", after, i, ev.RawJSON(), events[after+1+i].RawJSON())
			}
		}
	}
	// The whole stream again, from the start.
	again := collect(t, c.Responses.GetStreaming(ctx, final.ID, responses.ResponseGetParams{}))
	if len(again) != len(events) || again[len(again)-1].RawJSON() != last.RawJSON() {
		t.Fatalf("the stream replayed is %d events, want %d", len(again), len(events))
	}
}

func eventTypes(events []responses.ResponseStreamEventUnion) string {
	var s []string
	for _, ev := range events {
		s = append(s, ev.Type)
	}
	return strings.Join(s, " ")
}

func TestResponseConversationAndPrevious(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.aliceKey)
	ctx := context.Background()
	conv, err := c.Conversations.New(ctx, conversationsNewWithUserItem("first"))
	if err != nil {
		t.Fatal(err)
	}
	r1, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("second"), Conversation: inConversation(conv.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if r1.OutputText() != "You said: second (2 user messages)" || r1.Conversation.ID != conv.ID {
		t.Fatalf("r1 = %q in %s", r1.OutputText(), r1.Conversation.ID)
	}
	r2, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("third"),
		Conversation: responses.ResponseNewParamsConversationUnion{OfConversationObject: &responses.ResponseConversationParam{ID: conv.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	if r2.OutputText() != "You said: third (3 user messages)" {
		t.Fatalf("r2 = %q", r2.OutputText())
	}
	// Continuing r1, which a later run followed, forks the conversation at r1.
	f, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("other third"), PreviousResponseID: openai.String(r1.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if f.OutputText() != "You said: other third (3 user messages)" || f.Conversation.ID == conv.ID || f.PreviousResponseID != r1.ID {
		t.Fatalf("fork = %q in %s (previous %q)", f.OutputText(), f.Conversation.ID, f.PreviousResponseID)
	}
	if e.storedReply(t, conv.ID) != r2.OutputText() {
		t.Fatal("the fork changed the conversation")
	}
	// Continuing the latest response stays in its conversation.
	r3, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("fourth"), PreviousResponseID: openai.String(r2.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if r3.OutputText() != "You said: fourth (4 user messages)" || r3.Conversation.ID != conv.ID {
		t.Fatalf("r3 = %q in %s", r3.OutputText(), r3.Conversation.ID)
	}
	// Both at once is a 400 naming the field.
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("x"), PreviousResponseID: openai.String(r3.ID), Conversation: inConversation(conv.ID)})
	if ae := wantAPIError(t, err, http.StatusBadRequest, carryon.EINVALID); !strings.Contains(ae.RawJSON(), `"param":"previous_response_id"`) {
		t.Fatalf("error = %s", ae.RawJSON())
	}
}

// weatherTool is a function tool of the client.
var weatherTool = responses.ToolParamOfFunction("get_weather", map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}, false)

// functionOutput answers call id with output.
func functionOutput(callID, output string) responses.ResponseNewParamsInputUnion {
	item := responses.ResponseInputItemParamOfFunctionCallOutput(output)
	item.OfFunctionCallOutput.CallID = openai.String(callID)
	return responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{item}}
}

func TestResponseFunctionToolsRoundTrip(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.aliceKey)
	ctx := context.Background()
	r1, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("what is the weather?"), Tools: []responses.ToolUnionParam{weatherTool}})
	if err != nil {
		t.Fatal(err)
	}
	if r1.Status != responses.ResponseStatusCompleted || len(r1.Output) != 1 {
		t.Fatalf("r1 = %s with %s", r1.Status, r1.RawJSON())
	}
	call := r1.Output[0]
	if call.Type != "function_call" || call.CallID != "call_w1" || call.Name != "get_weather" || call.Arguments.OfString != `{"city":"Oslo"}` {
		t.Fatalf("r1's output = %s", r1.RawJSON())
	}
	if len(r1.Tools) != 1 || r1.Tools[0].Name != "get_weather" {
		t.Fatalf("r1's tools = %+v", r1.Tools)
	}
	// The outputs, with previous_response_id: the run continues, as the next response.
	r2, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: functionOutput("call_w1", "sunny"), PreviousResponseID: openai.String(r1.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if r2.OutputText() != "Done: sunny" || r2.ID != r1.ID+"_1" || r2.PreviousResponseID != r1.ID || r2.Conversation.ID != r1.Conversation.ID {
		t.Fatalf("r2 = %s %q (previous %s)", r2.ID, r2.OutputText(), r2.PreviousResponseID)
	}
	in, err := c.Responses.InputItems.List(ctx, r2.ID, responses.InputItemListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Data) != 1 || in.Data[0].Type != "function_call_output" || in.Data[0].CallID != "call_w1" || in.Data[0].Output.OfString != "sunny" {
		t.Fatalf("r2's input items = %s", in.RawJSON())
	}
	// r1 stays what it was.
	again, err := c.Responses.Get(ctx, r1.ID, responses.ResponseGetParams{})
	if err != nil || again.RawJSON() != r1.RawJSON() {
		t.Fatalf("r1 retrieved = %v %v", again, err)
	}
	// On the conversation, streamed: the call, then the outputs found by the conversation.
	conv := r1.Conversation.ID
	events := collect(t, c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("and the weather now?"),
		Conversation: inConversation(conv), Tools: []responses.ToolUnionParam{weatherTool}}))
	checkSequence(t, events, 0)
	if !strings.Contains(eventTypes(events), "response.output_item.added response.function_call_arguments.delta response.function_call_arguments.done response.output_item.done response.completed") {
		t.Fatalf("stream = %s", eventTypes(events))
	}
	// While it waits for the outputs, the conversation is busy.
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("hello?"), Conversation: inConversation(conv)})
	if ae := wantAPIError(t, err, http.StatusConflict, carryon.EBUSY); header(ae).Get("Retry-After") == "" {
		t.Fatal("session_busy without Retry-After")
	}
	r4, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: functionOutput("call_w1", "rain"), Conversation: inConversation(conv)})
	if err != nil {
		t.Fatal(err)
	}
	if r4.OutputText() != "Done: rain" {
		t.Fatalf("r4 = %q", r4.OutputText())
	}
	// An output nobody waits for.
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: functionOutput("call_w1", "again"), Conversation: inConversation(conv)})
	if ae := wantAPIError(t, err, http.StatusBadRequest, carryon.EINVALID); !strings.Contains(ae.RawJSON(), `"param":"input"`) {
		t.Fatalf("error = %s", ae.RawJSON())
	}
}

func TestResponseBackgroundCancelIdempotency(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.aliceKey)
	ctx := context.Background()
	bg, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("later"), Background: openai.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if bg.Status != responses.ResponseStatusQueued || !bg.Background || len(bg.Output) != 0 {
		t.Fatalf("background answer = %s", bg.RawJSON())
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := c.Responses.Get(ctx, bg.ID, responses.ResponseGetParams{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == responses.ResponseStatusCompleted {
			if got.OutputText() != "You said: later (1 user messages)" {
				t.Fatalf("background reply = %q", got.OutputText())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background response is still %s", got.Status)
		}
		e.runs.Wait(ctx, bg.ID) // returns once the run ended
	}
	// Cancel a response whose model call hangs: it ends cancelled, and its stream says so.
	hang, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("hang on"), Background: openai.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	stopped, err := c.Responses.Cancel(ctx, hang.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stopped.Status != responses.ResponseStatusCancelled {
		t.Fatalf("cancelled response = %s", stopped.RawJSON())
	}
	events := collect(t, c.Responses.GetStreaming(ctx, hang.ID, responses.ResponseGetParams{}))
	checkSequence(t, events, 0)
	if end := events[len(events)-1]; end.Type != "response.incomplete" || end.Response.Status != responses.ResponseStatusCancelled {
		t.Fatalf("the cancelled response's stream: %s", eventTypes(events))
	}
	// Cancel: a run waiting for tool outputs ends cancelled; its response stays as it was.
	waiting, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("weather please"), Tools: []responses.ToolUnionParam{weatherTool}})
	if err != nil {
		t.Fatal(err)
	}
	cancelled, err := c.Responses.Cancel(ctx, waiting.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cancelled.ID != waiting.ID {
		t.Fatalf("cancel answered %s", cancelled.ID)
	}
	if run, err := e.runs.GetRun(e.alice, waiting.ID); err != nil || run.Status != carryon.RunCancelled {
		t.Fatalf("run after cancel = %v, %v", run, err)
	}
	// The same Idempotency-Key: the same response, one run; with another body, a 422 not retried.
	key := option.WithHeader("Idempotency-Key", "turn-1")
	a, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("once")}, key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("once")}, key)
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != b.ID || a.RawJSON() != b.RawJSON() {
		t.Fatalf("a repeat made %s, the first %s", b.ID, a.ID)
	}
	page, err := e.runs.ListRuns(e.alice, a.Conversation.ID, carryon.RunFilter{})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("runs of the conversation = %v, %v", page, err)
	}
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("twice")}, key)
	if ae := wantAPIError(t, err, http.StatusUnprocessableEntity, carryon.EKEYREUSED); header(ae).Get("x-should-retry") != "false" {
		t.Fatal("idempotency_key_reused without x-should-retry: false")
	}
}

func TestResponseErrors(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.aliceKey)
	ctx := context.Background()
	mine, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("mine")})
	if err != nil {
		t.Fatal(err)
	}
	web := responses.ToolUnionParam{OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}}
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("x"), Tools: []responses.ToolUnionParam{web}})
	if ae := wantAPIError(t, err, http.StatusBadRequest, carryon.EINVALID); !strings.Contains(ae.RawJSON(), `"param":"tools"`) {
		t.Fatalf("error = %s", ae.RawJSON())
	}
	badTool := responses.ToolParamOfFunction("bad name", map[string]any{"type": "object"}, false)
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("x"), Tools: []responses.ToolUnionParam{badTool}})
	if ae := wantAPIError(t, err, http.StatusBadRequest, carryon.EINVALID); !strings.Contains(ae.RawJSON(), `"param":"tools"`) {
		t.Fatalf("error = %s", ae.RawJSON())
	}
	err = c.Responses.Delete(ctx, mine.ID)
	wantAPIError(t, err, http.StatusBadRequest, carryon.EINVALID)
	for _, id := range []string{"run_nosuchrun", "resp_123", mine.ID + "_7"} {
		_, err = c.Responses.Get(ctx, id, responses.ResponseGetParams{})
		wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND)
	}
	// Another user's response, and continuing it, are a 404.
	bob := e.client(e.bobKey)
	_, err = bob.Responses.Get(ctx, mine.ID, responses.ResponseGetParams{})
	wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND)
	_, err = bob.Responses.InputItems.List(ctx, mine.ID, responses.InputItemListParams{})
	wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND)
	_, err = bob.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("x"), PreviousResponseID: openai.String(mine.ID)})
	wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND)
	_, err = bob.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("x"), Conversation: inConversation(mine.Conversation.ID)})
	wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND)
	// An input that does not end with a user's message; no input at all; a bad key.
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage("Hi.", responses.EasyInputMessageRoleAssistant)}}})
	wantAPIError(t, err, http.StatusBadRequest, carryon.EINVALID)
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "m"})
	wantAPIError(t, err, http.StatusBadRequest, carryon.EINVALID)
	_, err = e.client("ck_wrong").Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("x")})
	wantAPIError(t, err, http.StatusUnauthorized, carryon.EUNAUTHORIZED)
	// Refusals wrote nothing: alice still has the one session.
	list, err := e.sessions.List(e.alice, carryon.SessionFilter{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("alice's sessions = %v, %v", list, err)
	}
}

// itemText is the text of an item's first content part.
func itemText(raw string) string {
	var it struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal([]byte(raw), &it) != nil || len(it.Content) == 0 {
		return ""
	}
	return it.Content[0].Text
}

func conversationsItemListAsc() conversations.ItemListParams {
	return conversations.ItemListParams{Order: conversations.ItemListParamsOrderAsc}
}

func conversationsNewWithUserItem(text string) conversations.ConversationNewParams {
	return conversations.ConversationNewParams{Items: []responses.ResponseInputItemUnionParam{
		responses.ResponseInputItemParamOfMessage(text, responses.EasyInputMessageRoleUser)}}
}
