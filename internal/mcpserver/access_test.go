package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// aliceSession makes a session of alice's with a working memory and two messages, and an item
// of her long-term memory; it returns the session's id.
func aliceSession(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	id := ok(t, cs, "create_session", map[string]any{"title": "alice's secret project", "working_memory": map[string]any{
		"goal": "launch the rocket", "next_action": "fuel stage two",
		"plan": []any{map[string]any{"title": "build stage one", "status": "done"}, map[string]any{"title": "fuel stage two", "status": "doing"}},
	}})["id"].(string)
	ok(t, cs, "append_messages", map[string]any{"session_id": id, "messages": []any{
		map[string]any{"role": "user", "content": "stage one is built"},
		map[string]any{"role": "assistant", "content": "next I fuel stage two"},
	}})
	ok(t, cs, "remember", map[string]any{"namespace": "prefs", "key": "fuel", "value": "hydrazine", "text": "alice's fuel"})
	return id
}

func readResource(t *testing.T, cs *mcp.ClientSession, uri string) (map[string]any, *mcp.ReadResourceResult, error) {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, nil, err
	}
	if len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" || res.Contents[0].URI != uri {
		t.Fatalf("%s: contents %v", uri, res.Contents)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &m); err != nil {
		t.Fatalf("%s: not JSON: %v", uri, err)
	}
	return m, res, nil
}

func TestResources(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	cs := e.connect(e.aliceKey)
	id := aliceSession(t, cs)

	tpl, err := cs.ListResourceTemplates(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, rt := range tpl.ResourceTemplates {
		uris = append(uris, rt.URITemplate)
	}
	slices.Sort(uris)
	want := []string{"carryon://memories/{namespace}/{key}", "carryon://sessions/{id}", "carryon://sessions/{id}/memory", "carryon://sessions/{id}/messages"}
	if !slices.Equal(uris, want) || tpl.CacheScope != "private" {
		t.Fatalf("resource templates %v (cache %q), want %v, private", uris, tpl.CacheScope, want)
	}

	sess, res, err := readResource(t, cs, "carryon://sessions/"+id)
	if err != nil || sess["id"] != id || sess["working_memory"].(map[string]any)["goal"] != "launch the rocket" || len(sess["messages"].([]any)) != 2 {
		t.Fatalf("session resource: %v %v", sess, err)
	}
	if res.CacheScope != "private" {
		t.Errorf("resources/read cacheScope = %q, want private", res.CacheScope)
	}
	wm, _, err := readResource(t, cs, "carryon://sessions/"+id+"/memory")
	if err != nil || wm["session_id"] != id || wm["working_memory"].(map[string]any)["next_action"] != "fuel stage two" {
		t.Fatalf("memory resource: %v %v", wm, err)
	}
	msgs, _, err := readResource(t, cs, "carryon://sessions/"+id+"/messages")
	if err != nil || msgs["session_id"] != id || len(msgs["messages"].([]any)) != 2 || msgs["messages"].([]any)[1].(map[string]any)["content"] != "next I fuel stage two" {
		t.Fatalf("messages resource: %v %v", msgs, err)
	}
	item, _, err := readResource(t, cs, "carryon://memories/prefs/fuel")
	if err != nil || item["value"] != "hydrazine" {
		t.Fatalf("memory item resource: %v %v", item, err)
	}
	for _, uri := range []string{"carryon://sessions/sess_missing", "carryon://memories/prefs/missing"} {
		if _, _, err := readResource(t, cs, uri); err == nil || !strings.Contains(err.Error(), "not_found") {
			t.Errorf("%s: want a not_found error, got %v", uri, err)
		}
	}
}

func TestContinueTaskPrompt(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	cs := e.connect(e.aliceKey)
	id := aliceSession(t, cs)
	list, err := cs.ListPrompts(context.Background(), nil)
	if err != nil || len(list.Prompts) != 1 || list.Prompts[0].Name != "continue_task" || list.CacheScope != "private" {
		t.Fatalf("prompts/list: %v %v", list, err)
	}
	if a := list.Prompts[0].Arguments; len(a) != 1 || a[0].Name != "session_id" || !a[0].Required {
		t.Fatalf("continue_task arguments: %v", a)
	}
	res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "continue_task", Arguments: map[string]string{"session_id": id}})
	if err != nil || len(res.Messages) != 1 {
		t.Fatalf("prompts/get: %v %v", res, err)
	}
	txt := res.Messages[0].Content.(*mcp.TextContent).Text
	for _, want := range []string{id, "Goal: launch the rocket", "Next action: fuel stage two", "1. [done] build stage one",
		"2. [doing] fuel stage two", "user: stage one is built", "assistant: next I fuel stage two", "expected_version 2"} {
		if !strings.Contains(txt, want) {
			t.Errorf("continue_task lacks %q:\n%s", want, txt)
		}
	}
	if _, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "continue_task", Arguments: map[string]string{"session_id": "sess_missing"}}); err == nil || !strings.Contains(err.Error(), "not_found") {
		t.Errorf("continue_task of a missing session: %v", err)
	}
}

// Another user's key reaches none of alice's data: every tool answers a tool error (not_found,
// as for a missing session), and the resources and the prompt refuse.
func TestAnotherUsersKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	alice := e.connect(e.aliceKey)
	id := aliceSession(t, alice)
	bob := e.connect(e.bobKey)

	secrets := []string{"rocket", "stage", "hydrazine", "secret"}
	noSecret := func(what, s string) {
		t.Helper()
		for _, w := range secrets {
			if strings.Contains(s, w) {
				t.Errorf("%s shows alice's data (%q): %s", what, w, s)
			}
		}
	}
	for name, args := range map[string]map[string]any{
		"get_session":           {"session_id": id},
		"append_messages":       {"session_id": id, "messages": []any{map[string]any{"role": "user", "content": "hijack"}}},
		"update_working_memory": {"session_id": id, "patch": map[string]any{"goal": "hijacked"}},
		"start_run":             {"session_id": id, "message": "hijack"},
		"forget":                {"namespace": "prefs", "key": "fuel"},
		"delete_message":        {"session_id": id, "seq": 1},
	} {
		noSecret(name, toolError(t, bob, name, args, "not_found"))
	}
	for name, args := range map[string]map[string]any{
		"list_sessions": {},
		"recall":        {"query": "fuel hydrazine"},
	} {
		out := ok(t, bob, name, args)
		if len(out["items"].([]any)) != 0 {
			t.Errorf("%s for bob: %v", name, out)
		}
		noSecret(name, mustJSON(t, out))
	}
	for _, uri := range []string{"carryon://sessions/" + id, "carryon://sessions/" + id + "/memory", "carryon://sessions/" + id + "/messages", "carryon://memories/prefs/fuel"} {
		_, _, err := readResource(t, bob, uri)
		if err == nil || !strings.Contains(err.Error(), "not_found") {
			t.Errorf("bob reads %s: %v", uri, err)
		} else {
			noSecret(uri, err.Error())
		}
	}
	if _, err := bob.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "continue_task", Arguments: map[string]string{"session_id": id}}); err == nil {
		t.Error("bob got alice's continue_task")
	} else {
		noSecret("continue_task", err.Error())
	}

	// Nothing bob tried changed alice's session or memory.
	got := ok(t, alice, "get_session", map[string]any{"session_id": id})
	if got["version"] != float64(2) || got["message_count"] != float64(2) || got["working_memory"].(map[string]any)["goal"] != "launch the rocket" {
		t.Fatalf("alice's session after bob: %v", got)
	}
	if items := ok(t, alice, "recall", map[string]any{"query": "fuel"})["items"].([]any); len(items) != 1 {
		t.Fatalf("alice's memory after bob's forget: %v", items)
	}
}

// /mcp takes the same API keys as /v1: without one, or with a bad one, it answers 401 with a
// problem and never reaches the MCP server.
func TestMCPNeedsAKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	for name, auth := range map[string]string{"no key": "", "bad key": "Bearer co_not_a_key", "not bearer": "Basic YWxpY2U6eA=="} {
		req, _ := http.NewRequest("POST", e.srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Content-Type") != "application/problem+json" ||
			!strings.Contains(string(b), `"unauthorized"`) || strings.Contains(string(b), "list_sessions") {
			t.Errorf("%s: %d %s %s", name, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "carryon-test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: e.srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{"co_bad", e.srv.Client().Transport}}}
	if cs, err := c.Connect(context.Background(), tr, nil); err == nil {
		cs.Close()
		t.Fatal("the go-sdk client connected with a bad key")
	}
	// With a good key the same request is served.
	req, _ := http.NewRequest("POST", e.srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+e.aliceKey)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"carryon"`) {
		t.Fatalf("initialize with a good key: %d %s", resp.StatusCode, b)
	}
}

// A request that reached the server under another Host name (a reverse proxy on the same
// machine) is served: the key, not the Host header, decides.
func TestMCPBehindAProxyHost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	req, _ := http.NewRequest("POST", e.srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	req.Host = "carryon.example.com"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+e.aliceKey)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "list_sessions") {
		t.Fatalf("tools/list under another Host: %d %s", resp.StatusCode, b)
	}
}
