package openaiapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/conversations"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// Every route through the official Go client: create with metadata and items, retrieve, update,
// items create, retrieve, list, delete; the session API sees the same history.
func TestConversationRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client(e.aliceKey)
	ctx := t.Context()
	conv, err := c.Conversations.New(ctx, conversations.ConversationNewParams{
		Metadata: shared.Metadata{"topic": "lexer"},
		Items: []responses.ResponseInputItemUnionParam{
			responses.ResponseInputItemParamOfMessage("You are terse.", responses.EasyInputMessageRoleDeveloper),
			responses.ResponseInputItemParamOfMessage("Write the lexer.", responses.EasyInputMessageRoleUser),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(conv.ID, carryon.SessionIDPrefix) || conv.CreatedAt == 0 || conv.Metadata.(map[string]any)["topic"] != "lexer" {
		t.Fatalf("created %s", conv.RawJSON())
	}
	got, err := c.Conversations.Get(ctx, conv.ID)
	if err != nil || got.ID != conv.ID || got.CreatedAt != conv.CreatedAt || string(got.Object) != "conversation" {
		t.Fatalf("get = %v, %v", got, err)
	}
	upd, err := c.Conversations.Update(ctx, conv.ID, conversations.ConversationUpdateParams{Metadata: shared.Metadata{"topic": "parser"}})
	if err != nil || upd.Metadata.(map[string]any)["topic"] != "parser" {
		t.Fatalf("update = %v, %v", upd, err)
	}

	added, err := c.Conversations.Items.New(ctx, conv.ID, conversations.ItemNewParams{
		Include: []responses.ResponseIncludable{},
		Items: []responses.ResponseInputItemUnionParam{
			responses.ResponseInputItemParamOfFunctionCall(`{"path":"lexer.go"}`, "call_1", "read_file"),
			{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{CallID: openai.String("call_1"),
				Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String("package lexer")}}},
			{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{CallID: openai.String("call_1"),
				Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String("")}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(added.Data) != 3 || added.Data[0].Type != "function_call" || added.Data[1].Type != "function_call_output" || added.HasMore {
		t.Fatalf("items created: %s", added.RawJSON())
	}
	fc := added.Data[0].AsFunctionCall()
	if fc.CallID != "call_1" || fc.Name != "read_file" || fc.Arguments != `{"path":"lexer.go"}` || added.FirstID != fc.ID || added.LastID != added.Data[2].ID {
		t.Fatalf("function call item %s", added.RawJSON())
	}

	// The items read back as they were sent; the session holds them as messages.
	one, err := c.Conversations.Items.Get(ctx, conv.ID, added.Data[1].ID, conversations.ItemGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	if out := one.AsFunctionCallOutput(); out.CallID != "call_1" || out.Output.OfString != "package lexer" || out.ID != added.Data[1].ID {
		t.Fatalf("item %s", one.RawJSON())
	}
	page, err := e.sessions.ListMessages(e.alice, conv.ID, carryon.MessageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range page.Items {
		roles = append(roles, string(m.Role)+":"+m.Content)
	}
	want := []string{"system:You are terse.", "user:Write the lexer.", "assistant:", "tool:package lexer", "tool:"}
	if !slices.Equal(roles, want) {
		t.Fatalf("session messages %q, want %q", roles, want)
	}
	first, err := c.Conversations.Items.Get(ctx, conv.ID, itemIDs(t, c, conv.ID, "asc")[0], conversations.ItemGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	if m := first.AsMessage(); m.Role != "developer" || len(m.Content) != 1 || m.Content[0].Text != "You are terse." || m.Status != "completed" {
		t.Fatalf("first item %s", first.RawJSON())
	}

	// Delete an item: the conversation comes back, the item is gone from every read.
	gone := added.Data[2].ID
	after, err := c.Conversations.Items.Delete(ctx, conv.ID, gone)
	if err != nil || after.ID != conv.ID {
		t.Fatalf("item delete = %v, %v", after, err)
	}
	_, err = c.Conversations.Items.Get(ctx, conv.ID, gone, conversations.ItemGetParams{})
	wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND)
	_, err = c.Conversations.Items.Delete(ctx, conv.ID, gone)
	wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND)
	if ids := itemIDs(t, c, conv.ID, "asc"); len(ids) != 4 || slices.Contains(ids, gone) {
		t.Fatalf("items after delete %v", ids)
	}
	view, err := e.sessions.Get(e.alice, conv.ID, carryon.GetOptions{})
	if err != nil || view.MessageCount != 4 {
		t.Fatalf("session after item delete = %+v, %v", view, err)
	}

	del, err := c.Conversations.Delete(ctx, conv.ID)
	if err != nil || !del.Deleted || del.ID != conv.ID || string(del.Object) != "conversation.deleted" {
		t.Fatalf("delete = %v, %v", del, err)
	}
	_, err = c.Conversations.Get(ctx, conv.ID)
	wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND)
}

// itemIDs lists every item id of a conversation with the SDK's auto-pager, two at a time.
func itemIDs(t *testing.T, c *openai.Client, id, order string) []string {
	t.Helper()
	pager := c.Conversations.Items.ListAutoPaging(t.Context(), id, conversations.ItemListParams{
		Limit: openai.Int(2), Order: conversations.ItemListParamsOrder(order)})
	var ids []string
	for pager.Next() {
		ids = append(ids, pager.Current().ID)
	}
	if err := pager.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// Auto-paging in both orders gives every item once, desc the reverse of asc; the default order
// is desc; `after` starts exactly past an item, also inside a message read as several items.
func TestItemPaging(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client(e.aliceKey)
	ctx := t.Context()
	conv, err := c.Conversations.New(ctx, conversations.ConversationNewParams{})
	if err != nil {
		t.Fatal(err)
	}
	// A native assistant message with text and two tool calls reads as three items.
	_, err = e.sessions.AppendMessages(e.alice, conv.ID, carryon.AppendInput{Messages: []carryon.NewMessage{
		{Role: carryon.RoleUser, Content: "u1"},
		{Role: carryon.RoleAssistant, Content: "a1", ToolCalls: json.RawMessage(`[{"id":"c1","name":"f","arguments":{}},{"id":"c2","name":"g","arguments":{"x":1}}]`)},
		{Role: carryon.RoleTool, ToolCallID: "c1", Content: "r1"},
		{Role: carryon.RoleTool, ToolCallID: "c2", Content: "r2"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		if _, err := c.Conversations.Items.New(ctx, conv.ID, conversations.ItemNewParams{Items: []responses.ResponseInputItemUnionParam{
			responses.ResponseInputItemParamOfMessage("m"+string(rune('a'+i)), responses.EasyInputMessageRoleUser)}}); err != nil {
			t.Fatal(err)
		}
	}
	// Deleted messages leave no hole in the pages.
	if _, err := e.sessions.DeleteMessage(e.alice, conv.ID, 6, carryon.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	asc, desc := itemIDs(t, c, conv.ID, "asc"), itemIDs(t, c, conv.ID, "desc")
	if len(asc) != 6+6 {
		t.Fatalf("asc ids %v: want 12", asc)
	}
	seen := map[string]bool{}
	for _, id := range asc {
		if seen[id] {
			t.Fatalf("id %s twice in %v", id, asc)
		}
		seen[id] = true
	}
	rev := slices.Clone(desc)
	slices.Reverse(rev)
	if !slices.Equal(rev, asc) {
		t.Fatalf("desc %v is not asc %v reversed", desc, asc)
	}
	def, err := c.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{})
	if err != nil || len(def.Data) != 12 || def.Data[0].ID != desc[0] || def.HasMore {
		t.Fatalf("default page = %v, %v", def, err)
	}
	for i := range asc {
		for _, order := range []string{"asc", "desc"} {
			ids := asc
			if order == "desc" {
				ids = desc
			}
			p, err := c.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{
				After: openai.String(ids[i]), Limit: openai.Int(3), Order: conversations.ItemListParamsOrder(order)})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, it := range p.Data {
				got = append(got, it.ID)
			}
			if w := ids[i+1 : min(len(ids), i+4)]; !slices.Equal(got, w) || p.HasMore != (i+4 < len(ids)) {
				t.Fatalf("%s after %s = %v (more %v), want %v", order, ids[i], got, p.HasMore, w)
			}
		}
	}
	_, err = c.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{Limit: openai.Int(101)})
	wantAPIError(t, err, http.StatusBadRequest, carryon.EINVALID)
	_, err = c.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{After: openai.String("nonsense")})
	wantAPIError(t, err, http.StatusBadRequest, carryon.EINVALID)
}

// The same Idempotency-Key creates the items once and answers the same ids; with another body
// it is a 422 the SDK must not retry.
func TestIdempotentItems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client(e.aliceKey)
	ctx := t.Context()
	params := conversations.ConversationNewParams{Items: []responses.ResponseInputItemUnionParam{
		responses.ResponseInputItemParamOfMessage("hello", responses.EasyInputMessageRoleUser)}}
	conv, err := c.Conversations.New(ctx, params, option.WithHeader("Idempotency-Key", "make-1"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Conversations.New(ctx, params, option.WithHeader("Idempotency-Key", "make-1"))
	if err != nil || again.ID != conv.ID {
		t.Fatalf("repeat of the create = %v, %v; want %s", again, err, conv.ID)
	}
	add := conversations.ItemNewParams{Items: []responses.ResponseInputItemUnionParam{
		responses.ResponseInputItemParamOfMessage("one", responses.EasyInputMessageRoleUser),
		responses.ResponseInputItemParamOfMessage("two", responses.EasyInputMessageRoleAssistant)}}
	a, err := c.Conversations.Items.New(ctx, conv.ID, add, option.WithHeader("Idempotency-Key", "add-1"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Conversations.Items.New(ctx, conv.ID, add, option.WithHeader("Idempotency-Key", "add-1"))
	if err != nil || b.FirstID != a.FirstID || b.LastID != a.LastID {
		t.Fatalf("repeat = %v, %v; want the ids %s..%s", b, err, a.FirstID, a.LastID)
	}
	if ids := itemIDs(t, c, conv.ID, "asc"); len(ids) != 3 {
		t.Fatalf("items %v, want hello, one, two", ids)
	}
	add.Items = add.Items[:1]
	_, err = c.Conversations.Items.New(ctx, conv.ID, add, option.WithHeader("Idempotency-Key", "add-1"))
	apiErr := wantAPIError(t, err, http.StatusUnprocessableEntity, carryon.EKEYREUSED)
	if header(apiErr).Get("x-should-retry") != "false" {
		t.Fatalf("x-should-retry = %q", header(apiErr).Get("x-should-retry"))
	}
	// A stale If-Match is 412, not to be retried either; a current one writes.
	_, err = c.Conversations.Items.New(ctx, conv.ID, add, option.WithHeader("If-Match", `"1"`))
	apiErr = wantAPIError(t, err, http.StatusPreconditionFailed, carryon.EVERSION)
	if header(apiErr).Get("x-should-retry") != "false" {
		t.Fatalf("x-should-retry = %q", header(apiErr).Get("x-should-retry"))
	}
	view, _ := e.sessions.Get(e.alice, conv.ID, carryon.GetOptions{})
	if _, err := c.Conversations.Items.New(ctx, conv.ID, add, option.WithHeader("If-Match", `"`+itoa(view.Version)+`"`)); err != nil {
		t.Fatal(err)
	}
}

// Another user's key gets 404 on every route of the conversation; no key or a wrong one 401,
// all in OpenAI's envelope.
func TestOwnership(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	conv, err := e.client(e.aliceKey).Conversations.New(ctx, conversations.ConversationNewParams{Items: []responses.ResponseInputItemUnionParam{
		responses.ResponseInputItemParamOfMessage("private", responses.EasyInputMessageRoleUser)}})
	if err != nil {
		t.Fatal(err)
	}
	ids := itemIDs(t, e.client(e.aliceKey), conv.ID, "asc")
	bob := e.client(e.bobKey)
	_, err = bob.Conversations.Get(ctx, conv.ID)
	wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND)
	_, err = bob.Conversations.Update(ctx, conv.ID, conversations.ConversationUpdateParams{Metadata: shared.Metadata{"a": "b"}})
	wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND)
	_, err = bob.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{})
	wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND)
	_, err = bob.Conversations.Items.Get(ctx, conv.ID, ids[0], conversations.ItemGetParams{})
	wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND)
	_, err = bob.Conversations.Items.Delete(ctx, conv.ID, ids[0])
	wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND)
	_, err = bob.Conversations.Items.New(ctx, conv.ID, conversations.ItemNewParams{Items: []responses.ResponseInputItemUnionParam{
		responses.ResponseInputItemParamOfMessage("x", responses.EasyInputMessageRoleUser)}})
	wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND)
	_, err = bob.Conversations.Delete(ctx, conv.ID)
	wantAPIError(t, err, http.StatusNotFound, carryon.ENOTFOUND)
	_, err = e.client("ck_wrong").Conversations.Get(ctx, conv.ID)
	wantAPIError(t, err, http.StatusUnauthorized, carryon.EUNAUTHORIZED)
	if ids2 := itemIDs(t, e.client(e.aliceKey), conv.ID, "asc"); !slices.Equal(ids2, ids) {
		t.Fatalf("alice's items changed: %v", ids2)
	}
}

// The leniencies kept (those of the OpenAI API): nulls, include, ids and status on input items, a
// message without type; an item type of no message shape is kept as sent and out of the model's
// context. Bad input, also a field the specification does not define, is a 400 naming the
// field, and stores nothing.
func TestLenientItems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	conv, err := e.client(e.aliceKey).Conversations.New(t.Context(), conversations.ConversationNewParams{})
	if err != nil {
		t.Fatal(err)
	}
	body := `{"items":[
		{"role":"user","content":[{"type":"input_text","text":"hi"}],"id":"msg_client","status":"in_progress"},
		{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"thinking"}],"encrypted_content":null}
	]}`
	status, answer := post(t, e, "/v1/conversations/"+conv.ID+"/items?include[]=message.output_text.logprobs", body)
	if status != http.StatusOK {
		t.Fatalf("lenient create = %d %s", status, answer)
	}
	var list struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal([]byte(answer), &list); err != nil || len(list.Data) != 2 {
		t.Fatalf("answer %s", answer)
	}
	if list.Data[0]["id"] == "msg_client" || list.Data[0]["status"] != "completed" || list.Data[0]["type"] != "message" {
		t.Fatalf("message item %v", list.Data[0])
	}
	if r := list.Data[1]; r["type"] != "reasoning" || r["summary"] == nil || r["id"] == "rs_1" {
		t.Fatalf("reasoning item %v", r)
	}
	page, err := e.sessions.ListMessages(e.alice, conv.ID, carryon.MessageFilter{})
	if err != nil || len(page.Items) != 2 || page.Items[0].Content != "hi" || page.Items[1].Content != "" || len(page.Items[1].ToolCalls) != 0 {
		t.Fatalf("messages %+v, %v", page, err)
	}
	for _, bad := range []struct{ body, param string }{
		{`{"items":[{"type":"message","role":"critic","content":"x"}]}`, "items[0].role"},
		{`{"items":[{"type":"function_call","call_id":"c","name":"f","arguments":"[1]"}]}`, "items[0].arguments"},
		{`{"items":[]}`, "items"},
		{`{"items":[{"role":"user","content":"x"}],"unknown":{"a":1}}`, "unknown"},
		{`{"items":[{"role":"user","content":"x","extra":null}]}`, "items[0].extra"},
		{`{"items":[` + strings.Repeat(`{"role":"user","content":"x"},`, 20) + `{"role":"user","content":"x"}]}`, "items"},
	} {
		status, answer := post(t, e, "/v1/conversations/"+conv.ID+"/items", bad.body)
		var env struct {
			Error struct {
				Param *string `json:"param"`
				Code  string  `json:"code"`
			} `json:"error"`
		}
		if status != http.StatusBadRequest || json.Unmarshal([]byte(answer), &env) != nil || env.Error.Param == nil || *env.Error.Param != bad.param {
			t.Fatalf("%s = %d %s; want 400 with param %s", bad.body, status, answer, bad.param)
		}
	}
	// A create whose items are refused leaves no conversation behind.
	status, answer = post(t, e, "/v1/conversations", `{"items":[{"type":"function_call_output","call_id":"nowhere","output":"x"}]}`)
	if status != http.StatusBadRequest {
		t.Fatalf("create with an unanswerable output = %d %s", status, answer)
	}
	all, err := e.sessions.List(e.alice, carryon.SessionFilter{})
	if err != nil || len(all.Items) != 1 {
		t.Fatalf("sessions after a refused create: %d, %v", len(all.Items), err)
	}
}

func post(t *testing.T, e *env, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", e.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.aliceKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
