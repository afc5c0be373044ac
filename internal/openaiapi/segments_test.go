package openaiapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// TestResponseSegmentsMustExist: a response id names a run and one of its segments (run_…_k, the
// part after its k-th stop for function call outputs). An id of a segment the run never had is a
// 404 in OpenAI's envelope wherever a response is named, and changes nothing: as
// previous_response_id of a text input or of function call outputs (both ran on the run's
// session before), as the response to cancel (the run was cancelled, then 404), and as the
// response to delete (a 400 about deleting before). Continuing a later segment forks at the end
// of that segment, not at the end of the run's first.
func TestResponseSegmentsMustExist(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client(e.aliceKey)
	ctx := context.Background()
	r, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("hello")})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("what is the weather?"), Tools: []responses.ToolUnionParam{weatherTool}})
	if err != nil {
		t.Fatal(err)
	}
	before := e.sessionsState(t)
	for _, id := range []string{r.ID + "_7", r.ID + "_1", w.ID + "_1"} {
		_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("go on"), PreviousResponseID: openai.String(id)})
		if ae := wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND); !strings.Contains(ae.Message, id) || ae.Type != "not_found_error" {
			t.Fatalf("previous_response_id %s: %s", id, ae.RawJSON())
		}
	}
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: functionOutput("call_w1", "sunny"), PreviousResponseID: openai.String(w.ID + "_3")})
	wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND)
	_, err = c.Responses.Cancel(ctx, w.ID+"_2")
	wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND)
	err = c.Responses.Delete(ctx, r.ID+"_2")
	wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND)
	if after := e.sessionsState(t); after != before {
		t.Fatalf("the refusals wrote:\n%s\nbecame\n%s", before, after)
	}
	if run, err := e.runs.GetRun(e.alice, w.ID); err != nil || run.Status != carryon.RunRequiresAction {
		t.Fatalf("the waiting run after the refusals: %v, %v", run, err)
	}

	// w's outputs make w_1; a later run follows it; continuing w_1 forks after w_1's reply.
	w1, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: functionOutput("call_w1", "sunny"), PreviousResponseID: openai.String(w.ID)})
	if err != nil || w1.ID != w.ID+"_1" || w1.OutputText() != "Done: sunny" {
		t.Fatalf("w_1 = %v, %v", w1, err)
	}
	if _, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("later"), Conversation: inConversation(w.Conversation.ID)}); err != nil {
		t.Fatal(err)
	}
	f, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: textInput("branch"), PreviousResponseID: openai.String(w1.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if f.Conversation.ID == w.Conversation.ID || f.PreviousResponseID != w1.ID {
		t.Fatalf("the continuation of w_1 ran in %s (previous %s), want a fork", f.Conversation.ID, f.PreviousResponseID)
	}
	page, err := e.sessions.ListMessages(e.alice, f.Conversation.ID, carryon.MessageFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range page.Items {
		got = append(got, string(m.Role)+": "+m.Content)
	}
	history := strings.Join(got, " | ")
	if !strings.Contains(history, "assistant: Done: sunny") || strings.Contains(history, "later") || !strings.HasSuffix(history, "user: branch | assistant: You said: branch (2 user messages)") {
		t.Fatalf("the fork's history: %s", history)
	}
}

// sessionsState is what a refused or repeated write must leave as it was: alice's sessions (forks
// too) with their versions and states.
func (e *env) sessionsState(t *testing.T) string {
	t.Helper()
	page, err := e.sessions.List(e.alice, carryon.SessionFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, s := range page.Items {
		fmt.Fprintf(&b, "%s v%d %s\n", s.ID, s.Version, s.Status)
	}
	return b.String()
}
