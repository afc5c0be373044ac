package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/bundle"
)

const ndjson = "Content-Type: application/x-ndjson"

// sessionCount is how many sessions the key's user has.
func sessionCount(t *testing.T, srv *server, key string) int {
	t.Helper()
	return len(must(t, srv.url, key, "GET", "/v1/sessions?limit=1000", nil, 200).json(t)["items"].([]any))
}

// resealed is b with its end line made anew for its other lines: a change that keeps the
// checksum right, so that only the change itself is wrong.
func resealed(t *testing.T, lines [][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	counts := map[string]int64{}
	for i, l := range lines {
		buf.Write(l)
		buf.WriteByte('\n')
		if i > 0 {
			var k struct{ Kind string }
			_ = json.Unmarshal(l, &k)
			counts[k.Kind]++
		}
	}
	sum := sha256.Sum256(buf.Bytes())
	end, _ := json.Marshal(map[string]any{"kind": "end", "sha256": hex.EncodeToString(sum[:]), "counts": counts})
	buf.Write(end)
	buf.WriteByte('\n')
	return buf.Bytes()
}

// sameBundle fails unless a and b are the same bundle apart from the ids and times that
// bundle.Normalize makes uniform: the session, run and action ids; the header's exported_at and
// session_id; the session's updated_at, last_active_at and expires_at; the end line's sha256.
func sameBundle(t *testing.T, a, b []byte) {
	t.Helper()
	na, err := bundle.Normalize(a)
	if err != nil {
		t.Fatal(err)
	}
	nb, err := bundle.Normalize(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(na, nb) {
		t.Fatalf("the bundles differ apart from ids and times:\n%s\n---\n%s", na, nb)
	}
}

// TestSessionExportImport: a session with messages, a deleted message, working-memory
// revisions, a run with a tool call (the scripted model) that wrote a workspace file, and a fork
// exports over HTTP, imports (CLI and HTTP) and exports again to the same bundle apart from ids
// and times; kept ids refuse a collision, another user never gets or shadows the ids, a request
// id makes one session, and bad bundles (tampered, truncated, newer, unknown lines, too large)
// are refused with a problem and store nothing.
func TestSessionExportImport(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "portable", "working_memory": map[string]any{"goal": "move"}}, 201).json(t)["id"].(string)
	must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/messages", map[string]any{"messages": []map[string]string{{"role": "user", "content": "keep me"}, {"role": "user", "content": "secret to delete"}}}, 201)
	must(t, srv.url, key, "DELETE", "/v1/sessions/"+sid+"/messages/2", nil, 200)
	must(t, srv.url, key, "PATCH", "/v1/sessions/"+sid+"/working_memory", map[string]any{"patch": map[string]any{"next_action": "export"}}, 200)
	args, _ := json.Marshal(map[string]string{"path": "notes/a.md", "content": "file body"})
	runID := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "/tool write_file " + string(args)}, 202).json(t)["id"].(string)
	if run := waitRun(t, srv, key, runID); run["status"] != "succeeded" {
		t.Fatalf("run: %v", run)
	}
	fork := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/fork", map[string]any{}, 201).json(t)["id"].(string)
	must(t, srv.url, key, "POST", "/v1/sessions/"+fork+"/messages", map[string]any{"messages": []map[string]string{{"role": "user", "content": "fork only"}}}, 201)

	exp := must(t, srv.url, key, "GET", "/v1/sessions/"+sid+"/export", nil, 200)
	if ct := exp.header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Fatalf("export Content-Type %q", ct)
	}
	first := exp.body
	if bytes.Contains(first, []byte("secret to delete")) {
		t.Fatal("the deleted message's text is in the bundle")
	}
	for _, kind := range []string{`"door":"api"`, `"kind":"tombstone"`, `"kind":"working_memory_revision"`, `"kind":"run"`, `"kind":"action"`, `"kind":"event"`, `"kind":"file"`} {
		if !bytes.Contains(first, []byte(kind)) {
			t.Fatalf("the bundle has no %s line:\n%s", kind, first)
		}
	}

	// CLI: export to a file, import it as a new session, export that: the same apart from ids and times.
	file := filepath.Join(t.TempDir(), "s.jsonl")
	cli(t, srv, "sessions", "export", sid, "-o", file)
	if b, _ := os.ReadFile(file); !bytes.Equal(bodyLines(b), bodyLines(first)) {
		t.Fatalf("the CLI's export differs from the route's beyond the header and the end line")
	}
	out := cli(t, srv, "sessions", "import", file)
	newID, _, _ := strings.Cut(out, " ")
	if newID == sid || !strings.HasPrefix(newID, "sess_") {
		t.Fatalf("sessions import: %q", out)
	}
	second := must(t, srv.url, key, "GET", "/v1/sessions/"+newID+"/export", nil, 200).body
	sameBundle(t, first, second)
	if b, err := os.ReadFile(filepath.Join(data, "workspaces", newID, "notes", "a.md")); err != nil || string(b) != "file body" {
		t.Fatalf("the imported workspace file: %q %v", b, err)
	}
	if v := must(t, srv.url, key, "GET", "/v1/sessions/"+newID, nil, 200).json(t); v["working_memory"].(map[string]any)["next_action"] != "export" {
		t.Fatalf("imported session: %v", v)
	}

	// The fork: a reference to its parent; on another server with kept ids it links again.
	forkBundle := must(t, srv.url, key, "GET", "/v1/sessions/"+fork+"/export", nil, 200).body
	if bytes.Contains(forkBundle, []byte(`"keep me"`)) || !bytes.Contains(forkBundle, []byte(`"parent_id":"`+sid+`"`)) {
		t.Fatalf("the fork's bundle holds its parent's rows or no reference:\n%s", forkBundle)
	}
	data2 := t.TempDir()
	srv2 := startServer(t, data2)
	key2 := localKey(t, data2)
	must(t, srv2.url, key2, "POST", "/v1/sessions/import", forkBundle, 400, ndjson) // its parent is not there yet
	must(t, srv2.url, key2, "POST", "/v1/sessions/import?keep_ids=true", first, 201, ndjson)
	got := must(t, srv2.url, key2, "POST", "/v1/sessions/import?keep_ids=true", forkBundle, 201, ndjson).json(t)
	if s := got["session"].(map[string]any); s["id"] != fork || s["parent_id"] != sid {
		t.Fatalf("imported fork: %v", got)
	}
	view := must(t, srv2.url, key2, "GET", "/v1/sessions/"+fork+"/messages", nil, 200).json(t)["items"].([]any)
	if len(view) < 2 || view[0].(map[string]any)["content"] != "keep me" || view[len(view)-1].(map[string]any)["content"] != "fork only" {
		t.Fatalf("imported fork's messages: %v", view)
	}
	sameBundle(t, forkBundle, must(t, srv2.url, key2, "GET", "/v1/sessions/"+fork+"/export", nil, 200).body)
	// Kept ids that exist: 409, nothing stored.
	n2 := sessionCount(t, srv2, key2)
	must(t, srv2.url, key2, "POST", "/v1/sessions/import?keep_ids=true", first, 409, ndjson)
	if sessionCount(t, srv2, key2) != n2 {
		t.Fatal("a refused import stored a session")
	}

	// Another user: cannot export alice's session, cannot take its ids, gets a copy of its own.
	bob := addUser(t, data, "bob")
	must(t, srv.url, bob, "GET", "/v1/sessions/"+sid+"/export", nil, 404)
	must(t, srv.url, bob, "POST", "/v1/sessions/import?keep_ids=true", first, 409, ndjson)
	if sessionCount(t, srv, bob) != 0 {
		t.Fatal("bob's refused import stored a session")
	}
	copyID := must(t, srv.url, bob, "POST", "/v1/sessions/import", first, 201, ndjson).json(t)["session"].(map[string]any)["id"].(string)
	must(t, srv.url, key, "GET", "/v1/sessions/"+copyID, nil, 404)

	// A request id: the repeat answers the first import, one session.
	n := sessionCount(t, srv, key)
	a := must(t, srv.url, key, "POST", "/v1/sessions/import", first, 201, ndjson, "Idempotency-Key: imp-1").json(t)
	r := must(t, srv.url, key, "POST", "/v1/sessions/import", first, 201, ndjson, "Idempotency-Key: imp-1")
	if r.header.Get("Idempotent-Replayed") != "true" || r.json(t)["session"].(map[string]any)["id"] != a["session"].(map[string]any)["id"] || sessionCount(t, srv, key) != n+1 {
		t.Fatalf("replay: %s", r.body)
	}
	must(t, srv.url, key, "POST", "/v1/sessions/import", forkBundle, 422, ndjson, "Idempotency-Key: imp-1")

	// Bad bundles: a problem each, nothing stored, not even the request id.
	lines := bytes.Split(bytes.TrimSuffix(first, []byte("\n")), []byte("\n"))
	body := lines[:len(lines)-1]
	newer := append([][]byte{[]byte(strings.Replace(string(lines[0]), fmt.Sprintf(`"version":%d`, bundle.Version), fmt.Sprintf(`"version":%d`, bundle.Version+1), 1))}, body[1:]...)
	unknown := append(append([][]byte{}, body...), []byte(`{"kind":"budget","budget":{}}`))
	for name, bad := range map[string][]byte{
		"tampered":  bytes.Replace(first, []byte("keep me"), []byte("keep us"), 1),
		"truncated": first[:len(first)-len(lines[len(lines)-1])-1],
		"cut":       first[:len(first)/2],
		"newer":     resealed(t, newer),
		"unknown":   resealed(t, unknown),
		"empty":     {},
	} {
		r := must(t, srv.url, key, "POST", "/v1/sessions/import", bad, 400, ndjson, "Idempotency-Key: bad-"+name)
		var p struct{ Code, Detail string }
		if json.Unmarshal(r.body, &p) != nil || p.Code != "invalid_request" || p.Detail == "" || r.header.Get("Content-Type") != "application/problem+json" {
			t.Fatalf("%s: %s", name, r.body)
		}
		t.Logf("%s: %s", name, p.Detail)
	}
	big := append(bytes.Repeat([]byte(" "), bundle.MaxBytes), first...)
	must(t, srv.url, key, "POST", "/v1/sessions/import", big, 413, ndjson)
	must(t, srv.url, key, "POST", "/v1/sessions/import", first, 415, "Content-Type: text/plain")
	if sessionCount(t, srv, key) != n+1 {
		t.Fatal("a refused import stored a session")
	}
	// The refused request ids were not kept: the same id now imports.
	must(t, srv.url, key, "POST", "/v1/sessions/import", first, 201, ndjson, "Idempotency-Key: bad-tampered")
}

// TestSessionImportOpenAI: the JSON of OpenAI's GET /v1/conversations/{id}/items, two pages newest
// first as the API answers them by default, becomes a session whose messages are the items in
// order, and which the OpenAI door reads back as the same items.
func TestSessionImportOpenAI(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	items, err := os.ReadFile(filepath.Join("testdata", "openai", "items.json"))
	if err != nil {
		t.Fatal(err)
	}
	res := must(t, srv.url, key, "POST", "/v1/sessions/import", items, 201).json(t)
	id := res["session"].(map[string]any)["id"].(string)
	msgs := must(t, srv.url, key, "GET", "/v1/sessions/"+id+"/messages", nil, 200).json(t)["items"].([]any)
	var got []string
	for _, m := range msgs {
		m := m.(map[string]any)
		got = append(got, m["role"].(string)+":"+m["content"].(string))
	}
	want := []string{"user:What is the weather in Paris?", "assistant:", `tool:{"temp_c":18,"sky":"sunny"}`, "assistant:It is 18°C and sunny in Paris."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("messages %q, want %q", got, want)
	}
	if calls := msgs[1].(map[string]any)["tool_calls"].([]any); calls[0].(map[string]any)["name"] != "get_weather" {
		t.Fatalf("the function call: %v", msgs[1])
	}
	// The OpenAI door's routes are not in the native document: read them past its answer check.
	req, _ := http.NewRequest("GET", srv.url+"/v1/conversations/"+id+"/items?order=asc", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct{ Data []any }
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	conv := list.Data
	if len(conv) != 4 || conv[1].(map[string]any)["call_id"] != "call_w1" || conv[3].(map[string]any)["content"].([]any)[0].(map[string]any)["text"] != "It is 18°C and sunny in Paris." {
		t.Fatalf("the conversation's items: %v", conv)
	}
	// The same pages as an array: the same messages.
	var pages []json.RawMessage
	for _, l := range bytes.Split(bytes.TrimSpace(items), []byte("\n")) {
		pages = append(pages, l)
	}
	arr, _ := json.Marshal(pages)
	id2 := must(t, srv.url, key, "POST", "/v1/sessions/import?format=openai&order=desc", arr, 201).json(t)["session"].(map[string]any)["id"].(string)
	if n := len(must(t, srv.url, key, "GET", "/v1/sessions/"+id2+"/messages", nil, 200).json(t)["items"].([]any)); n != 4 {
		t.Fatalf("array of pages: %d messages", n)
	}
	must(t, srv.url, key, "POST", "/v1/sessions/import", `{"object":"conversation"}`, 400)
	must(t, srv.url, key, "POST", "/v1/sessions/import?format=openai&keep_ids=true", items, 400)
}

// bodyLines is a bundle without its header and end line.
func bodyLines(b []byte) []byte {
	b = b[bytes.IndexByte(b, '\n')+1:]
	return b[:bytes.LastIndexByte(b[:len(b)-1], '\n')+1]
}
