package contextbuild_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/model/scripted"
)

// TestSummary: a build that cuts history asks for a summary of exactly the cut range; once the
// caller stored it, later builds send it instead of the messages it covers and ask for no other
// until the new messages no longer fit.
func TestSummary(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.session(t)
	f.chat(t, id, 1, 100, 2000)
	cfg := contextbuild.Config{Window: 30, Budget: 8000}
	summarizer := contextbuild.ModelSummarizer{Provider: scripted.New(0), Model: "scripted"}
	b := contextbuild.New(cfg, f.svc, summarizer)
	opt := contextbuild.Options{Model: "gpt-4o", Summarize: true}

	// Without Summarize (a preview) nothing is asked for, and the cut is counted.
	preview, err := b.Build(f.alice, id, contextbuild.Options{Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	if preview.NewSummary != nil || preview.SummaryCoversTo != 0 || preview.LastSeq != 100 {
		t.Fatalf("preview: new summary %v, covers to %d, last seq %d", preview.NewSummary, preview.SummaryCoversTo, preview.LastSeq)
	}
	if cut := int(preview.FirstSeq - 71); preview.Unsummarized != cut || cut <= 0 {
		t.Fatalf("preview: %d unsummarized, want the %d messages of the window it cut", preview.Unsummarized, cut)
	}

	c, err := b.Build(f.alice, id, opt)
	if err != nil {
		t.Fatal(err)
	}
	s := c.NewSummary
	if s == nil {
		t.Fatal("a build that cuts history asked for no summary")
	}
	if s.Kind != carryon.KindSummary || s.Role != carryon.RoleSystem || s.CoversFrom != 1 || s.CoversTo != c.FirstSeq-1 {
		t.Fatalf("summary %+v; first included message %d", s, c.FirstSeq)
	}
	// It cut deeper than the preview, so that the next turns fit without another summary.
	if c.FirstSeq <= preview.FirstSeq || c.LastSeq != 100 || c.Unsummarized != 0 || c.SummaryCoversTo != s.CoversTo {
		t.Fatalf("first seq %d (preview %d), last %d, unsummarized %d, covers to %d", c.FirstSeq, preview.FirstSeq, c.LastSeq, c.Unsummarized, c.SummaryCoversTo)
	}
	// The summary stands for the cut messages of the window and says that older ones were not read.
	for _, want := range []string{"(70 older messages were not summarized.)", "message 71:", fmt.Sprintf("message %d:", s.CoversTo)} {
		if !strings.Contains(s.Content, want) {
			t.Errorf("summary lacks %q:\n%s", want, s.Content)
		}
	}
	if strings.Contains(s.Content, fmt.Sprintf("message %d:", c.FirstSeq)) {
		t.Errorf("summary covers the first included message %d", c.FirstSeq)
	}
	wantSummaryPart(t, c, s.Content, s.CoversTo)
	checkExcludes(t, c, s.CoversTo)
	if c.Tokens > cfg.Budget {
		t.Errorf("context with its new summary has %d tokens, over the budget %d", c.Tokens, cfg.Budget)
	}

	// The caller stores it; the next builds send it and ask for no other while the new messages fit.
	f.add(t, id, *s)
	covered, first := s.CoversTo, c.FirstSeq
	next := 102 // the summary took seq 101; messages are numbered by their seq
	for round := 0; ; round++ {
		c, err = b.Build(f.alice, id, opt)
		if err != nil {
			t.Fatal(err)
		}
		if c.NewSummary != nil {
			break
		}
		if round > 20 {
			t.Fatal("no new summary after 40 more messages")
		}
		if c.FirstSeq != first || c.SummaryCoversTo != covered || c.Unsummarized != 0 {
			t.Fatalf("round %d: first seq %d (want %d), covers to %d (want %d), unsummarized %d", round, c.FirstSeq, first, c.SummaryCoversTo, covered, c.Unsummarized)
		}
		wantSummaryPart(t, c, s.Content, covered)
		checkExcludes(t, c, covered)
		if round == 0 && (c.LastSeq != 100 || c.Tokens > cfg.Budget) {
			t.Fatalf("after storing the summary: last seq %d, %d tokens", c.LastSeq, c.Tokens)
		}
		f.chat(t, id, next, 2, 2000)
		next += 2
	}
	t.Logf("first summary covers 1..%d; a second one was asked for after %d more messages", covered, next-102)
	if next-102 < 4 {
		t.Fatalf("another summary was asked for after only %d new messages", next-102)
	}
	// The new summary extends the stored one up to just before the first included message.
	s2 := c.NewSummary
	if s2.CoversFrom != 1 || s2.CoversTo != c.FirstSeq-1 || s2.CoversTo <= covered {
		t.Fatalf("second summary covers %d..%d, first included %d, first covered to %d", s2.CoversFrom, s2.CoversTo, c.FirstSeq, covered)
	}
	if !strings.Contains(s2.Content, "message 71:") || !strings.Contains(s2.Content, fmt.Sprintf("message %d:", s2.CoversTo)) {
		t.Errorf("second summary does not extend the first:\n%s", s2.Content)
	}
	wantSummaryPart(t, c, s2.Content, s2.CoversTo)
	checkExcludes(t, c, s2.CoversTo)
}

// wantSummaryPart checks that the context sends the summary covering up to coversTo.
func wantSummaryPart(t *testing.T, c *contextbuild.Context, content string, coversTo int64) {
	t.Helper()
	part := fmt.Sprintf("%s (messages 1–%d)\n%s", contextbuild.HeadingSummary, coversTo, content)
	found := false
	for _, p := range c.Parts {
		if p.Name == "summary" {
			found = p.Content == part && p.Tokens > 0
		}
	}
	if !found || !strings.Contains(c.System, part) || c.SummaryCoversTo != coversTo {
		t.Fatalf("context lacks the summary up to %d (covers to %d); parts %+v", coversTo, c.SummaryCoversTo, c.Parts)
	}
}

// checkExcludes checks that no message up to coversTo is sent, and no summary message either.
func checkExcludes(t *testing.T, c *contextbuild.Context, coversTo int64) {
	t.Helper()
	for _, m := range c.Messages {
		var n int64
		if _, err := fmt.Sscanf(m.Content, "message %d:", &n); err != nil || n <= coversTo {
			t.Fatalf("context sends %.40q, covered by the summary up to %d", m.Content, coversTo)
		}
	}
}
