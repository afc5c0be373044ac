package sessions_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
)

// wantRefused checks that err is EINVALID with a message holding every one of parts.
func wantRefused(t *testing.T, err error, parts ...string) {
	t.Helper()
	wantCode(t, err, carryon.EINVALID)
	for _, p := range parts {
		if !strings.Contains(carryon.ErrorMessage(err), p) {
			t.Fatalf("message %q does not mention %q", carryon.ErrorMessage(err), p)
		}
	}
}

// wantUnchanged checks that the session is still at version with no messages and no memory.
func (f *fixture) wantUnchanged(t *testing.T, id string, version int64) {
	t.Helper()
	v, err := f.svc.Get(f.alice, id, carryon.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Version != version || v.MessageCount != 0 || len(v.WorkingMemory) != 0 || string(v.Metadata) != "" || v.Title != "t" {
		t.Fatalf("a refused write changed the session: %+v", v)
	}
}

// Text with a NUL character is refused wherever it enters a session, naming the field (and the
// message's index), and nothing is stored.
func TestNULRefusedEverywhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.create(t, f.alice)
	user := func(c string) carryon.NewMessage { return carryon.NewMessage{Role: carryon.RoleUser, Content: c} }
	for _, tc := range []struct {
		msgs []carryon.NewMessage
		want string
	}{
		{[]carryon.NewMessage{user("ok"), user("ok"), user("a\x00b")}, "messages[2].content contains a NUL character"},
		{[]carryon.NewMessage{{Role: carryon.RoleUser, Content: "x", Name: "n\x00"}}, "messages[0].name contains a NUL"},
		{[]carryon.NewMessage{{Role: carryon.RoleUser, Content: "x", Metadata: json.RawMessage(`{"tags":["a","b\u0000"]}`)}}, "messages[0].metadata.tags[1] contains a NUL"},
		{[]carryon.NewMessage{{Role: carryon.RoleAssistant, ToolCalls: json.RawMessage(`[{"id":"c1","name":"t","arguments":{"p":"\u0000"}}]`)}}, "messages[0].tool_calls[0].arguments.p contains a NUL"},
		{[]carryon.NewMessage{user("bad \xff")}, "messages[0].content is not valid UTF-8"},
	} {
		_, err := f.svc.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: tc.msgs})
		wantRefused(t, err, tc.want)
	}
	_, err := f.svc.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{user("x")}, WriteOptions: carryon.WriteOptions{RequestID: "r\x00"}})
	wantRefused(t, err, "request_id contains a NUL")
	_, err = f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(`{"notes":{"a\u0000":1}}`)})
	wantRefused(t, err, "patch.notes (a key) contains a NUL")
	_, err = f.svc.Update(f.alice, s.ID, carryon.SessionUpdate{Title: carryon.Ptr("a\x00")})
	wantRefused(t, err, "title contains a NUL")
	_, err = f.svc.Update(f.alice, s.ID, carryon.SessionUpdate{Metadata: json.RawMessage(`{"k":"\u0000"}`)})
	wantRefused(t, err, "metadata.k contains a NUL")
	f.wantUnchanged(t, s.ID, s.Version)
	_, err = f.svc.Create(f.alice, carryon.NewSession{WorkingMemory: carryon.WorkingMemory{"goal": "a\x00"}})
	wantRefused(t, err, "working_memory.goal contains a NUL")
	// An escaped backslash before u0000 is text, not a NUL.
	if _, err := f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(`{"goal":"a\\u0000"}`)}); err != nil {
		t.Fatalf("a literal \\u0000 was refused: %v", err)
	}
}

// A number beyond a 64-bit float's range (valid JSON, unreadable to a client that decodes
// doubles) is refused wherever JSON enters a session, naming its path, and nothing is stored; a
// large integer inside the range and a number too small to tell from zero are kept as written.
func TestHugeNumbersRefusedEverywhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.create(t, f.alice)
	for _, tc := range []struct {
		msg  carryon.NewMessage
		want string
	}{
		{carryon.NewMessage{Role: carryon.RoleUser, Content: "x", Metadata: json.RawMessage(`{"tags":[1,1e400]}`)}, "messages[0].metadata.tags[1] is the number 1e400, beyond the range of a 64-bit float"},
		{carryon.NewMessage{Role: carryon.RoleUser, Content: "x", Metadata: json.RawMessage(`{"n":-` + strings.Repeat("9", 400) + `}`)}, "messages[0].metadata.n is the number -999"},
		{carryon.NewMessage{Role: carryon.RoleAssistant, ToolCalls: json.RawMessage(`[{"id":"c1","name":"t","arguments":{"p":1.8E308}}]`)}, "messages[0].tool_calls[0].arguments.p is the number 1.8E308"},
	} {
		_, err := f.svc.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{tc.msg}})
		wantRefused(t, err, tc.want)
	}
	_, err := f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(`{"notes":{"x":1E700}}`)})
	wantRefused(t, err, "patch.notes.x is the number 1E700")
	_, err = f.svc.Update(f.alice, s.ID, carryon.SessionUpdate{Metadata: json.RawMessage(`{"k":1e309}`)})
	wantRefused(t, err, "metadata.k is the number 1e309")
	f.wantUnchanged(t, s.ID, s.Version)
	const kept = `{"big":18446744073709551617,"max":1.7976931348623157e308,"text":"1e999","tiny":1e-700}`
	st, err := f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(`{"notes":` + kept + `}`)})
	if err != nil {
		t.Fatalf("numbers inside a float's range were refused: %v", err)
	}
	if got, _ := json.Marshal(st.WorkingMemory["notes"]); string(got) != kept {
		t.Fatalf("notes stored as %s, want %s", got, kept)
	}
}

// A client's tool calls and tool messages are checked on append: each call has an id, a name
// and object arguments; the OpenAI shape is refused with a detail that names the expected one; a
// tool message answers a call earlier in the append or stored before.
func TestToolCallsCheckedOnAppend(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.create(t, f.alice)
	asst := func(calls string) carryon.NewMessage {
		return carryon.NewMessage{Role: carryon.RoleAssistant, ToolCalls: json.RawMessage(calls)}
	}
	tool := func(id string) carryon.NewMessage {
		return carryon.NewMessage{Role: carryon.RoleTool, Content: "result", ToolCallID: id}
	}
	for _, tc := range []struct {
		name string
		msgs []carryon.NewMessage
		want []string
	}{
		{"OpenAI shape", []carryon.NewMessage{asst(`[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{}"}}]`)},
			[]string{"messages[0].tool_calls[0]", "OpenAI shape", `"name": "tool_name"`}},
		{"no id", []carryon.NewMessage{asst(`[{"name":"t","arguments":{}}]`)}, []string{"messages[0].tool_calls[0].id must be a non-empty string"}},
		{"no name", []carryon.NewMessage{asst(`[{"id":"c1","name":"","arguments":{}}]`)}, []string{"tool_calls[0].name must be a non-empty string"}},
		{"string arguments", []carryon.NewMessage{asst(`[{"id":"c1","name":"t","arguments":"{}"}]`)}, []string{"arguments must be a JSON object", "a string"}},
		{"no arguments", []carryon.NewMessage{asst(`[{"id":"c1","name":"t"}]`)}, []string{"arguments must be a JSON object", "missing"}},
		{"unknown field", []carryon.NewMessage{asst(`[{"id":"c1","name":"t","arguments":{},"type":"x"}]`)}, []string{`unknown field "type"`}},
		{"twice the same id", []carryon.NewMessage{asst(`[{"id":"c1","name":"t","arguments":{}},{"id":"c1","name":"u","arguments":{}}]`)}, []string{"used twice"}},
		{"not an array of objects", []carryon.NewMessage{asst(`["c1"]`)}, []string{"tool_calls must be a JSON array"}},
		{"calls on a user message", []carryon.NewMessage{{Role: carryon.RoleUser, Content: "x", ToolCalls: json.RawMessage(`[{"id":"c1","name":"t","arguments":{}}]`)}}, []string{"only assistant messages"}},
		{"tool message without id", []carryon.NewMessage{tool("")}, []string{"messages[0].tool_call_id is required"}},
		{"tool message answering nothing", []carryon.NewMessage{tool("c9")}, []string{`messages[0].tool_call_id "c9" answers no tool call`}},
		{"answer before the call", []carryon.NewMessage{tool("c1"), asst(`[{"id":"c1","name":"t","arguments":{}}]`)}, []string{"messages[0].tool_call_id"}},
		{"tool_call_id on a user message", []carryon.NewMessage{{Role: carryon.RoleUser, Content: "x", ToolCallID: "c1"}}, []string{"for tool messages only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.svc.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: tc.msgs})
			wantRefused(t, err, tc.want...)
		})
	}
	f.wantUnchanged(t, s.ID, s.Version)

	// A call and its answer in one append, then an answer to a stored call.
	r, err := f.svc.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{
		asst(`[{"id":"c1","name":"t","arguments":{}},{"id":"c2","name":"t","arguments":{"n":1}}]`), tool("c1")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{tool("c2")}}); err != nil {
		t.Fatalf("an answer to a stored call: %v", err)
	}
	if r.Messages[0].ToolCalls == nil {
		t.Fatal("tool calls not stored")
	}
}

// An expected version below 1 is a malformed request (400), not a conflict (409).
func TestExpectedVersionBelowOneIsInvalid(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.create(t, f.alice)
	for _, v := range []int64{0, -1} {
		opts := carryon.WriteOptions{ExpectedVersion: carryon.Ptr(v)}
		_, err := f.svc.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "x"}}, WriteOptions: opts})
		wantRefused(t, err, "expected_version must be a session version, 1 or more")
		_, err = f.svc.Close(f.alice, s.ID, opts)
		wantRefused(t, err, "expected_version")
		_, err = f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(`{"goal":"g"}`), WriteOptions: opts})
		wantRefused(t, err, "expected_version")
	}
	f.wantUnchanged(t, s.ID, s.Version)
}

// Integers above 2^53 are kept exactly in working memory (create and patch, read back and in
// the history and diff), in metadata and in tool calls.
func TestBigIntegersKeptExactly(t *testing.T) {
	t.Parallel()
	const big = "9007199254740993" // 2^53 + 1: float64 rounds it to …992
	f := newFixture(t)
	s, err := f.svc.Create(f.alice, carryon.NewSession{Title: "t", Metadata: json.RawMessage(`{"n":` + big + `}`),
		WorkingMemory: carryon.WorkingMemory{"start": json.Number(big)}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(s.Metadata), big) {
		t.Errorf("metadata on create: %s", s.Metadata)
	}
	if _, err := f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(`{"count":` + big + `,"nested":{"id":` + big + `}}`)}); err != nil {
		t.Fatal(err)
	}
	r, err := f.svc.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleAssistant,
		ToolCalls: json.RawMessage(`[{"id":"c1","name":"t","arguments":{"n":` + big + `}}]`), Metadata: json.RawMessage(`{"m":` + big + `}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	u, err := f.svc.Update(f.alice, s.ID, carryon.SessionUpdate{Metadata: json.RawMessage(`{"u":` + big + `}`)})
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.svc.Get(f.alice, s.ID, carryon.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wm, _ := json.Marshal(v.WorkingMemory)
	hist, err := f.svc.WorkingMemoryHistory(f.alice, s.ID, carryon.RevisionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := json.Marshal(hist)
	diff, err := f.svc.WorkingMemoryDiff(f.alice, s.ID, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := json.Marshal(diff)
	for name, got := range map[string]string{
		"working memory": string(wm), "history": string(h), "diff": string(d), "tool calls": string(v.Messages[0].ToolCalls),
		"message metadata": string(r.Messages[0].Metadata), "session metadata": string(u.Metadata),
	} {
		if !strings.Contains(got, big) || strings.Contains(got, "9007199254740992") {
			t.Errorf("%s: %s does not keep %s", name, got, big)
		}
	}
	if n := strings.Count(string(wm), big); n != 3 {
		t.Errorf("working memory %s holds %s %d times, want 3", wm, big, n)
	}
}
