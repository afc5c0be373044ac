package openaiapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// TestOutputsOnClosedConversation: function call outputs for a response whose conversation was
// closed meanwhile are a 409 session_closed in OpenAI's envelope, by previous_response_id and by
// conversation alike; the call gets no result and the run ends failed with the reason.
func TestOutputsOnClosedConversation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client(e.aliceKey)
	ctx := context.Background()
	w, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("what is the weather?"), Tools: []responses.ToolUnionParam{weatherTool}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.sessions.Close(e.alice, w.Conversation.ID, carryon.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: functionOutput("call_w1", "sunny"), Conversation: inConversation(w.Conversation.ID)})
	wantAPIError(t, err, http.StatusConflict, carryon.ECLOSED)
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: functionOutput("call_w1", "sunny"), PreviousResponseID: openai.String(w.ID)})
	wantAPIError(t, err, http.StatusConflict, carryon.ECLOSED)
	run, err := e.runs.GetRun(e.alice, w.ID)
	if err != nil || run.Status != carryon.RunFailed || !strings.Contains(run.Error, "was closed while the run waited for tool outputs") {
		t.Fatalf("run = %+v, %v; want failed with the reason", run, err)
	}
	acts, err := e.runs.Actions(e.alice, w.ID)
	if err != nil || len(acts) != 1 || acts[0].Status != carryon.ActionWaiting || acts[0].Result != "" {
		t.Fatalf("journal = %+v, %v; want the call still waiting, without a result", acts, err)
	}
}
