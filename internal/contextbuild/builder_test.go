package contextbuild_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
)

// TestSystemMessage: the system message carries the working memory and the tool digest, and the
// parts' token counts add up to the context's total.
func TestSystemMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.session(t)
	patch := `{"goal":"Ship the 2.0 release","plan":[{"title":"Freeze the API","status":"done"},{"title":"Write the notes","status":"doing"},{"title":"Tag it"}],"next_action":"Draft the notes from the changelog","notes":["CI is green","Docs moved to /docs"]}`
	if _, err := f.svc.PatchWorkingMemory(f.alice, id, carryon.WorkingMemoryPatch{Patch: json.RawMessage(patch)}); err != nil {
		t.Fatal(err)
	}
	f.add(t, id, carryon.NewMessage{Role: carryon.RoleUser, Content: "Where are we?"},
		carryon.NewMessage{Role: carryon.RoleAssistant, Content: "Writing the notes."})
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	acts := &fakeActions{Source: f.svc, acts: []*carryon.Action{
		{Tool: "write_file", Args: json.RawMessage(`{"path":"NOTES.md"}`), Status: carryon.ActionSucceeded, Result: "wrote 120 bytes", StartedAt: t0.Add(time.Minute)},
		{Tool: "read_file", Args: json.RawMessage(`{"path":"CHANGELOG.md"}`), Status: carryon.ActionFailed, Error: "no such file", StartedAt: t0},
	}}
	b := contextbuild.New(contextbuild.Config{ToolDigest: 5}, acts, nil)
	c, err := b.Build(f.alice, id, contextbuild.Options{Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		contextbuild.DefaultSystemPrompt,
		contextbuild.HeadingWorkingMemory + "\nGoal: Ship the 2.0 release\nPlan:\n  1. [done] Freeze the API\n  2. [doing] Write the notes\n  3. [todo] Tag it\nNext action: Draft the notes from the changelog\nNotes:\n  - CI is green\n  - Docs moved to /docs",
		// oldest call first
		contextbuild.HeadingTools + "\n- read_file({\"path\":\"CHANGELOG.md\"}) failed: error: no such file\n- write_file({\"path\":\"NOTES.md\"}) succeeded: wrote 120 bytes",
	} {
		if !strings.Contains(c.System, want) {
			t.Errorf("system message lacks\n%s\n--- system:\n%s", want, c.System)
		}
	}
	if acts.limit != 5 {
		t.Errorf("asked for %d recent actions, want the configured 5", acts.limit)
	}
	if len(c.Messages) != 2 || c.Messages[0].Content != "Where are we?" || c.FirstSeq != 1 || c.LastSeq != 2 {
		t.Errorf("messages = %+v (seqs %d..%d)", c.Messages, c.FirstSeq, c.LastSeq)
	}
	sum, names := 0, map[string]int{}
	for _, p := range c.Parts {
		sum += p.Tokens
		names[p.Name] = p.Tokens
	}
	if sum != c.Tokens || c.Tokens <= 0 {
		t.Errorf("parts add up to %d tokens, context says %d: %+v", sum, c.Tokens, c.Parts)
	}
	counter := contextbuild.CounterFor("gpt-4o")
	if names["working_memory"] != counter.Count(contextbuild.HeadingWorkingMemory+"\n"+contextbuild.RenderWorkingMemory(c.WorkingMemory)) {
		t.Errorf("working_memory part = %d tokens", names["working_memory"])
	}
	for _, n := range []string{"system_prompt", "working_memory", "tool_digest", "messages"} {
		if names[n] <= 0 {
			t.Errorf("part %s has %d tokens", n, names[n])
		}
	}
	if c.Estimated || c.Encoding != "o200k_base" || c.Budget != 16000 || c.Version == 0 {
		t.Errorf("estimated=%v encoding=%q budget=%d version=%d", c.Estimated, c.Encoding, c.Budget, c.Version)
	}
}

// TestEstimated: only models with a known vocabulary get exact counts.
func TestEstimated(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.session(t)
	b := contextbuild.New(contextbuild.Config{}, f.svc, nil)
	for m, want := range map[string]bool{"gpt-4o": false, "scripted": true, "claude-sonnet-4-5": true} {
		c, err := b.Build(f.alice, id, contextbuild.Options{Model: m})
		if err != nil {
			t.Fatal(err)
		}
		if c.Estimated != want || c.Model != m {
			t.Errorf("model %s: estimated = %v, want %v", m, c.Estimated, want)
		}
	}
}

// TestBudgetKeepsNewest: with a small budget only the newest messages are sent, and the cut ones
// are counted as unsummarized when no summary is asked for.
func TestBudgetKeepsNewest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.session(t)
	f.chat(t, id, 1, 60, 200)
	big, err := contextbuild.New(contextbuild.Config{Budget: 1 << 20}, f.svc, nil).Build(f.alice, id, contextbuild.Options{Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	if len(big.Messages) != 60 || big.Unsummarized != 0 || big.FirstSeq != 1 {
		t.Fatalf("with room for all: %d messages from %d, %d unsummarized", len(big.Messages), big.FirstSeq, big.Unsummarized)
	}
	budget := big.Tokens / 3
	c, err := contextbuild.New(contextbuild.Config{Budget: budget}, f.svc, nil).Build(f.alice, id, contextbuild.Options{Model: "gpt-4o", Summarize: true})
	if err != nil {
		t.Fatal(err)
	}
	n := len(c.Messages)
	if n == 0 || n >= 30 || c.LastSeq != 60 || c.FirstSeq != int64(60-n+1) {
		t.Fatalf("kept %d messages, seqs %d..%d", n, c.FirstSeq, c.LastSeq)
	}
	if c.Messages[n-1].Content != text(60, 200) {
		t.Errorf("last message = %q", c.Messages[n-1].Content)
	}
	if c.Tokens > budget {
		t.Errorf("context has %d tokens, over its budget of %d", c.Tokens, budget)
	}
	// The messages are of about the same length: the room left is less than one more of them.
	if avg := big.Parts[len(big.Parts)-1].Tokens / 60; budget-c.Tokens > avg+avg/4 {
		t.Errorf("context has %d tokens of %d: room for another %d-token message was left", c.Tokens, budget, avg)
	}
	if c.Unsummarized != 60-n || c.NewSummary != nil || c.SummaryCoversTo != 0 {
		t.Errorf("unsummarized = %d (want %d), new summary %v", c.Unsummarized, 60-n, c.NewSummary)
	}
}

// TestBudgetDropsLeadingTool: a cut that lands between a tool call and its result drops the
// result too (the model API refuses a result without its call); the last message is always kept.
func TestBudgetDropsLeadingTool(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.session(t)
	long := strings.Repeat("a long planning message about the build system and its caches. ", 40)
	calls, _ := json.Marshal([]carryon.ToolCall{{ID: "call_9", Name: "read_file", Arguments: json.RawMessage(`{"path":"` + strings.Repeat("x", 2000) + `"}`)}})
	f.add(t, id,
		carryon.NewMessage{Role: carryon.RoleUser, Content: long},
		carryon.NewMessage{Role: carryon.RoleAssistant, ToolCalls: calls},
		carryon.NewMessage{Role: carryon.RoleTool, ToolCallID: "call_9", Name: "read_file", Content: "ok"},
		carryon.NewMessage{Role: carryon.RoleAssistant, Content: "Read it."},
		carryon.NewMessage{Role: carryon.RoleUser, Content: "Go on."},
	)
	empty, err := contextbuild.New(contextbuild.Config{}, f.svc, nil).Build(f.alice, f.session(t), contextbuild.Options{Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	// Room for the last three messages and more, not for the call's 2000-byte arguments.
	c, err := contextbuild.New(contextbuild.Config{Budget: empty.Tokens + 100}, f.svc, nil).Build(f.alice, id, contextbuild.Options{Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 2 || c.Messages[0].Content != "Read it." || c.Messages[1].Content != "Go on." || c.FirstSeq != 4 || c.LastSeq != 5 {
		t.Fatalf("messages = %+v (seqs %d..%d), want the last two", c.Messages, c.FirstSeq, c.LastSeq)
	}
	// A budget too small for anything keeps the last message all the same.
	huge := strings.Repeat("final words ", 3000)
	f.add(t, id, carryon.NewMessage{Role: carryon.RoleUser, Content: huge})
	c, err = contextbuild.New(contextbuild.Config{Budget: 10}, f.svc, nil).Build(f.alice, id, contextbuild.Options{Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 1 || c.Messages[0].Content != huge || c.LastSeq != 6 || c.Unsummarized != 5 {
		t.Fatalf("tiny budget: %d messages, last seq %d, %d unsummarized", len(c.Messages), c.LastSeq, c.Unsummarized)
	}
}

// TestReadsOnlyTheWindow: a build asks its source for the configured window of messages, never
// the whole session.
func TestReadsOnlyTheWindow(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.session(t)
	f.chat(t, id, 1, 1200, 80)
	src := &countingSource{inner: f.svc}
	b := contextbuild.New(contextbuild.Config{Window: 37, Budget: 1 << 20}, src, nil)
	c, err := b.Build(f.alice, id, contextbuild.Options{Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	if src.calls != 1 || src.asked[0] != 37 || src.returned != 37 {
		t.Fatalf("source asked %d times for %v messages, returned %d; want once for 37", src.calls, src.asked, src.returned)
	}
	if len(c.Messages) != 37 || c.FirstSeq != 1200-36 || c.LastSeq != 1200 {
		t.Errorf("context has %d messages, seqs %d..%d", len(c.Messages), c.FirstSeq, c.LastSeq)
	}
}

// TestMetadataOnlyMessagesStayOut: a message with only metadata is kept in the session and left
// out of the model's context.
func TestMetadataOnlyMessagesStayOut(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.session(t)
	f.add(t, id, carryon.NewMessage{Role: carryon.RoleUser, Content: "hello"},
		carryon.NewMessage{Role: carryon.RoleUser, Metadata: json.RawMessage(`{"event":"state change"}`)},
		carryon.NewMessage{Role: carryon.RoleAssistant, Content: "hi"})
	c, err := contextbuild.New(contextbuild.Config{}, f.svc, nil).Build(f.alice, id, contextbuild.Options{Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 2 || c.Messages[0].Content != "hello" || c.Messages[1].Content != "hi" {
		t.Fatalf("context messages = %+v; want hello and hi only", c.Messages)
	}
}
