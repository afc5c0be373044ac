package contextbuild

import (
	"context"
	"fmt"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model"
)

// SummarizePrompt starts the system prompt of a summary request.
const SummarizePrompt = "Summarize the conversation below for an agent that will continue it."

// summaryOverhead is what a summary request takes besides the previous summary and the
// messages: its instructions and each line's role prefix, generously.
const summaryOverhead = 200

// summarize asks for a summary of the cut messages extending the current one, and records it as
// the summary the caller must store. No request to the summarizer is over the summary budget:
// the cut messages go in chunks that fit beside the summary so far (a message too long for a
// chunk of its own is clipped, and the summary so far is clipped to half the budget), each
// chunk extending the summary of the ones before, all of them within the SummaryTimeout. Nothing
// is recorded unless every chunk succeeds; what the calls used is added to out.SummaryUsage
// either way.
func (b *Builder) summarize(ctx context.Context, counter *Counter, out *Context, summaryText *string, cut []*carryon.Message) error {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.SummaryTimeout)
	defer cancel()
	previous := *summaryText
	if gap := cut[0].Seq - out.SummaryCoversTo - 1; gap > 0 {
		// Messages older than the window that no summary covers: say so rather than pretend.
		previous = strings.TrimSpace(previous + "\n(" + itoa(gap) + " older messages were not summarized.)")
	}
	budget := max(b.cfg.SummaryBudget, 2*summaryOverhead)
	for rest := cut; len(rest) > 0; {
		previous = clipTokens(counter, previous, budget/2)
		room := budget - summaryOverhead - counter.Count(previous)
		var chunk []*carryon.Message
		used := 0
		for len(rest) > 0 {
			n := counter.message(rest[0])
			if len(chunk) > 0 && used+n > room {
				break
			}
			m := rest[0]
			if n > room {
				m = clipMessage(counter, m, room)
			}
			chunk, used, rest = append(chunk, m), used+n, rest[1:]
		}
		text, spent, err := b.summarizer.Summarize(ctx, previous, chunk)
		out.SummaryUsage.InputTokens += spent.InputTokens
		out.SummaryUsage.OutputTokens += spent.OutputTokens
		if err != nil {
			if ctx.Err() == context.DeadlineExceeded {
				return fmt.Errorf("the summary took longer than %s: %w", b.cfg.SummaryTimeout, err)
			}
			return err
		}
		previous = text
	}
	last := cut[len(cut)-1].Seq
	out.NewSummary = &carryon.NewMessage{Role: carryon.RoleSystem, Kind: carryon.KindSummary, Content: previous, CoversFrom: 1, CoversTo: last}
	*summaryText, out.SummaryCoversTo = previous, last
	return nil
}

// clipMessage returns a copy of m whose content and tool calls fit in about n tokens.
func clipMessage(counter *Counter, m *carryon.Message, n int) *carryon.Message {
	cp := *m
	calls := ""
	if len(m.ToolCalls) > 0 {
		calls = clipTokens(counter, string(m.ToolCalls), n/4)
		cp.ToolCalls = nil
	}
	content := m.Content
	if calls != "" {
		content = strings.TrimSpace(content + "\n(calls tools " + calls + ")")
	}
	cp.Content = clipTokens(counter, content, n-perMessage)
	return &cp
}

// clipTokens cuts s, on a rune boundary, to the longest beginning that fits in n tokens with
// the mark of the cut.
func clipTokens(counter *Counter, s string, n int) string {
	if counter.Count(s) <= n {
		return s
	}
	const mark = " …(clipped)"
	r := []rune(s)
	lo, hi := 0, len(r)-1 // the longest fitting prefix has between lo and hi runes
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if counter.Count(string(r[:mid])+mark) <= n {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo == 0 {
		return ""
	}
	return string(r[:lo]) + mark
}

// ModelSummarizer asks a model for summaries.
type ModelSummarizer struct {
	Provider model.Provider
	Model    string
	// Instructions, when set, are added to the summary request's system prompt.
	Instructions string
}

// WithInstructions returns the summarizer with the caller's instructions for one compaction.
func (s ModelSummarizer) WithInstructions(instructions string) Summarizer {
	s.Instructions = instructions
	return s
}

// Summarize asks the model to extend the previous summary with the given messages.
func (s ModelSummarizer) Summarize(ctx context.Context, previous string, msgs []*carryon.Message) (string, carryon.Usage, error) {
	var t strings.Builder
	if previous != "" {
		fmt.Fprintf(&t, "Summary so far:\n%s\n\nThen:\n", previous)
	}
	for _, m := range msgs {
		content := m.Content
		if content == "" && len(m.ToolCalls) > 0 {
			content = "(calls tools " + string(m.ToolCalls) + ")"
		}
		fmt.Fprintf(&t, "%s: %s\n", m.Role, content)
	}
	req := model.Request{
		Model: s.Model,
		System: SummarizePrompt + " Keep decisions, facts, file names, open questions and what was " +
			"done; drop pleasantries. Answer with the summary only, as short bullet points.",
		Messages: []model.Message{{Role: model.RoleUser, Content: t.String()}},
	}
	if s.Instructions != "" {
		req.System += "\n\nInstructions for this summary: " + s.Instructions
	}
	res, err := model.Collect(s.Provider.Stream(ctx, req))
	used := carryon.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens}
	if err != nil {
		return "", used, err
	}
	return strings.TrimSpace(res.Text), used, nil
}
