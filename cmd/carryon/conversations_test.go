package main

import (
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/conversations"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// TestConversationsOnServe: `carryon serve` serves the Conversations API with its keys; a
// conversation made with the official Go client survives a SIGKILL and reads the same after the
// restart, over both APIs.
func TestConversationsOnServe(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	client := func(url string) *openai.Client {
		// Not http.DefaultTransport: it checks answers against the native API's document, and
		// these routes are OpenAI's.
		c := openai.NewClient(option.WithBaseURL(url+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0),
			option.WithHTTPClient(&http.Client{Transport: &http.Transport{}}))
		return &c
	}
	c := client(srv.url)
	conv, err := c.Conversations.New(t.Context(), conversations.ConversationNewParams{Items: []responses.ResponseInputItemUnionParam{
		responses.ResponseInputItemParamOfMessage("remember the train at nine", responses.EasyInputMessageRoleUser)}},
		option.WithHeader("Idempotency-Key", "conv-1"))
	if err != nil {
		t.Fatal(err)
	}
	srv.kill()
	srv = startServer(t, data)
	c = client(srv.url)
	again, err := c.Conversations.New(t.Context(), conversations.ConversationNewParams{Items: []responses.ResponseInputItemUnionParam{
		responses.ResponseInputItemParamOfMessage("remember the train at nine", responses.EasyInputMessageRoleUser)}},
		option.WithHeader("Idempotency-Key", "conv-1"))
	if err != nil || again.ID != conv.ID {
		t.Fatalf("the create repeated after the restart = %v, %v; want %s", again, err, conv.ID)
	}
	page, err := c.Conversations.Items.List(t.Context(), conv.ID, conversations.ItemListParams{})
	if err != nil || len(page.Data) != 1 || page.Data[0].AsMessage().Content[0].Text != "remember the train at nine" {
		t.Fatalf("items after the restart = %v, %v", page, err)
	}
	view := must(t, srv.url, key, "GET", "/v1/sessions/"+conv.ID, nil, 200).json(t)
	if view["message_count"] != float64(1) {
		t.Fatalf("the session has %v messages", view["message_count"])
	}
}
