package contextbuild_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/scripted"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool"
)

// addRaw stores messages as an old session may hold them, past the checks a client's append
// gets today (the way a runner appends).
func (f *fixture) addRaw(tb testing.TB, id string, msgs ...carryon.NewMessage) {
	tb.Helper()
	err := f.st.Write(context.Background(), func(_ context.Context, tx store.Tx) error {
		sess, err := tx.GetSession(context.Background(), "usr_alice", id)
		if err != nil {
			return err
		}
		_, err = sessions.AppendInTx(context.Background(), tx, sess, msgs, "", "", time.Now().UTC().Truncate(time.Microsecond))
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// An old session with tool messages that answer nothing and calls nobody answered still builds:
// what a model API would refuse is left out, and the context says so in its notes.
func TestBuildLeavesOutBrokenToolPairs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.session(t)
	call := func(content, calls string) carryon.NewMessage {
		return carryon.NewMessage{Role: carryon.RoleAssistant, Content: content, ToolCalls: json.RawMessage(calls)}
	}
	result := func(id string) carryon.NewMessage {
		return carryon.NewMessage{Role: carryon.RoleTool, Content: "result of " + id, ToolCallID: id}
	}
	f.addRaw(t, id,
		carryon.NewMessage{Role: carryon.RoleUser, Content: "hi"},
		call("", `[{"id":"c1","name":"t","arguments":{}},{"id":"c2","name":"t","arguments":{}}]`), // c2 is never answered
		result("c1"), result("c9"), result(""),
		carryon.NewMessage{Role: carryon.RoleUser, Content: "next"},
		call("", `[{"id":"c3","name":"t","arguments":{}}]`), // nobody answers c3
		carryon.NewMessage{Role: carryon.RoleUser, Content: "again"},
		call("some text", `[{"id":"c4","arguments":{}}]`), result("c4"), // a call without a name
		carryon.NewMessage{Role: carryon.RoleAssistant, Content: "done"},
	)
	c, err := contextbuild.New(contextbuild.Config{}, f.svc, nil).Build(f.alice, id, contextbuild.Options{Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range c.Messages {
		s := m.Role + ":" + m.Content
		for _, tc := range m.ToolCalls {
			s += " call " + tc.ID
		}
		if m.ToolCallID != "" {
			s += " for " + m.ToolCallID
		}
		got = append(got, s)
	}
	want := []string{"user:hi", "assistant: call c1", "tool:result of c1 for c1", "user:next", "user:again", "assistant:some text", "assistant:done"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("messages sent:\n %q\nwant\n %q", got, want)
	}
	notes := strings.Join(c.Notes, "\n")
	for _, w := range []string{"left out 3 tool message(s) that answer no tool call", "seq 4 for c9", "seq 5 without a tool_call_id", "seq 10 for c4",
		"left out 2 tool call(s) that no tool message answers", "seq 2: t c2", "seq 7: t c3", "left out 1 malformed tool call(s)"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
	b, _ := json.Marshal(c)
	if !strings.Contains(string(b), `"notes":["left out`) {
		t.Errorf("the context preview shows no notes: %s", b)
	}
	total := 0
	for _, p := range c.Parts {
		total += p.Tokens
	}
	if total != c.Tokens {
		t.Errorf("parts add up to %d, context has %d tokens", total, c.Tokens)
	}
	// A well-formed session has no notes.
	id2 := f.session(t)
	f.add(t, id2, carryon.NewMessage{Role: carryon.RoleUser, Content: "hi"}, call("", `[{"id":"c1","name":"t","arguments":{}}]`), result("c1"))
	c, err = contextbuild.New(contextbuild.Config{}, f.svc, nil).Build(f.alice, id2, contextbuild.Options{Model: "gpt-4o"})
	if err != nil || len(c.Notes) != 0 || len(c.Messages) != 3 {
		t.Fatalf("a clean session: %v, notes %q, %d messages", err, c.Notes, len(c.Messages))
	}
}

// failingSummarizer fails every request.
type failingSummarizer struct{ calls int }

func (s *failingSummarizer) Summarize(context.Context, string, []*carryon.Message) (string, carryon.Usage, error) {
	s.calls++
	return "", carryon.Usage{}, errors.New("model is overloaded")
}

// When summarizing fails, the build does not: it answers the window that fits, unsummarized,
// asks the caller to store no summary, and says why in a note. A cancelled build still fails.
func TestBuildGoesOnWhenSummarizingFails(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.session(t)
	f.chat(t, id, 1, 60, 2000)
	cfg := contextbuild.Config{Window: 60, Budget: 4000}
	sum := &failingSummarizer{}
	b := contextbuild.New(cfg, f.svc, sum)
	c, err := b.Build(f.alice, id, contextbuild.Options{Model: "gpt-4o", Summarize: true})
	if err != nil {
		t.Fatalf("a failing summarizer failed the build: %v", err)
	}
	preview, err := b.Build(f.alice, id, contextbuild.Options{Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.calls == 0 || c.NewSummary != nil || c.SummaryCoversTo != 0 || c.Unsummarized == 0 || c.Tokens > cfg.Budget {
		t.Fatalf("calls %d, new summary %v, covers to %d, unsummarized %d, tokens %d", sum.calls, c.NewSummary, c.SummaryCoversTo, c.Unsummarized, c.Tokens)
	}
	if c.FirstSeq != preview.FirstSeq || c.LastSeq != 60 || c.Unsummarized != preview.Unsummarized {
		t.Fatalf("window %d..%d (%d unsummarized), the preview's %d..%d (%d)", c.FirstSeq, c.LastSeq, c.Unsummarized, preview.FirstSeq, preview.LastSeq, preview.Unsummarized)
	}
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "summarizing the older messages failed (model is overloaded)") {
		t.Fatalf("notes %q", c.Notes)
	}
	cctx, cancel := context.WithCancel(f.alice)
	cancel()
	if _, err := b.Build(cctx, id, contextbuild.Options{Model: "gpt-4o", Summarize: true}); err == nil {
		t.Fatal("a cancelled build succeeded")
	}
}

// recordingSummarizer records what each request holds and answers with its messages' numbers.
type recordingSummarizer struct {
	counter *contextbuild.Counter
	inputs  []int
	seqs    []int64
	longest int
}

func (s *recordingSummarizer) Summarize(_ context.Context, previous string, msgs []*carryon.Message) (string, carryon.Usage, error) {
	n := s.counter.Count(previous)
	for _, m := range msgs {
		n += s.counter.Count(m.Content) + s.counter.Count(string(m.ToolCalls)) + 4
		s.seqs = append(s.seqs, m.Seq)
		s.longest = max(s.longest, len(m.Content))
	}
	s.inputs = append(s.inputs, n)
	return previous + " +" + strconv.Itoa(len(msgs)), carryon.Usage{}, nil
}

// The summarizer's input is bounded by the summary budget: long cut history goes in chunks, in
// order, each message once, a message too long for a chunk clipped.
func TestSummaryInputIsBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.session(t)
	f.chat(t, id, 1, 39, 2000)
	f.add(t, id, carryon.NewMessage{Role: carryon.RoleUser, Content: text(40, 200_000)}) // far over a chunk
	f.chat(t, id, 41, 20, 2000)
	const summaryBudget = 1500
	sum := &recordingSummarizer{counter: contextbuild.CounterFor("gpt-4o")}
	b := contextbuild.New(contextbuild.Config{Window: 60, Budget: 6000, SummaryBudget: summaryBudget}, f.svc, sum)
	c, err := b.Build(f.alice, id, contextbuild.Options{Model: "gpt-4o", Summarize: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.NewSummary == nil || len(sum.inputs) < 3 {
		t.Fatalf("summary %v after %d requests", c.NewSummary, len(sum.inputs))
	}
	for i, n := range sum.inputs {
		if n > summaryBudget {
			t.Errorf("request %d holds %d tokens, over the budget of %d", i, n, summaryBudget)
		}
	}
	for i, seq := range sum.seqs {
		if seq != int64(i+1) {
			t.Fatalf("the summarizer got seqs %v, want 1..%d in order, once each", sum.seqs, c.NewSummary.CoversTo)
		}
	}
	if int64(len(sum.seqs)) != c.NewSummary.CoversTo || sum.longest >= 200_000 {
		t.Fatalf("%d messages summarized, summary covers to %d; longest content %d bytes", len(sum.seqs), c.NewSummary.CoversTo, sum.longest)
	}
}

// A run on a session whose history needs a summary finishes although the summarizer's model
// fails: the run is not failed, and neither is the next one.
func TestRunGoesOnWhenSummarizerModelFails(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.session(t)
	f.chat(t, id, 1, 60, 2000)
	summarizer := contextbuild.ModelSummarizer{Provider: failingProvider{}, Model: "broken"}
	builder := contextbuild.New(contextbuild.Config{Window: 60, Budget: 4000}, f.svc, summarizer)
	reg, err := tool.NewRegistry(tool.UpdateWorkingMemory())
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(engine.Config{Model: "scripted", Workspaces: t.TempDir()}, scripted.New(0), reg, builder)
	rs := runs.New(f.st, f.svc, eng, runs.Config{Poll: 20 * time.Millisecond})
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); rs.Work(ctx) }()
	t.Cleanup(func() { stop(); wg.Wait() })
	for i := 0; i < 2; i++ {
		run, err := rs.Start(f.alice, id, carryon.NewRun{Message: "continue the task"})
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(f.alice, 30*time.Second)
		run, err = rs.Wait(wctx, run.ID)
		cancel()
		if err != nil || run.Status != carryon.RunSucceeded {
			t.Fatalf("run %d: %v, status %s, error %q", i, err, run.Status, run.Error)
		}
	}
}

// failingProvider is a model whose every call fails.
type failingProvider struct{}

func (failingProvider) Name() string { return "broken" }

func (failingProvider) Stream(context.Context, model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		yield(model.Chunk{}, errors.New("503 from the summary model"))
	}
}
