// Package contextbuild is the ContextBuilder: it turns a session's stored state into the model's
// input under a token budget. The system message carries the system prompt, the working memory
// (goal, plan with step status, next action, notes), the owner's long-term memory most relevant
// to the turn (within LongTermShare of the budget), a digest of recent tool calls and the summary
// of cut history; then come as many recent messages as fit.
//
// It reads one snapshot (Source.ContextSnapshot: the session, its working memory, the window of
// recent messages, the recent tool calls and the owner's long-term items, in one read
// transaction, so the parts agree with one session version), O(window) rows, never the whole
// session; and it never writes: when history no longer fits, it returns the summary the caller
// should store (a message of kind summary covering the cut range), so history is never rewritten.
//
// Known limit: the newest summary is found in the window. A run stores a new summary whenever it
// cuts, so the newest one is always recent; but if more than Window messages are appended between
// two runs (through the API, without a run), the older summary falls out of the window, and the
// next summary notes how many older messages it does not cover.
package contextbuild

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
)

// DefaultSystemPrompt tells the model how carryon sessions work.
const DefaultSystemPrompt = `You are an agent working inside a carryon session. The session keeps your working memory across requests and restarts: keep the goal, the plan (steps with status todo, doing or done), the next action and notes up to date with the update_working_memory tool whenever they change. When the user asks to continue, continue from the working memory: the current goal and next action say where the work stands.`

// Source reads the state a context is built from in one snapshot; the sessions service
// implements it.
type Source interface {
	ContextSnapshot(ctx context.Context, id string, req carryon.ContextSnapshotRequest) (*carryon.ContextSnapshot, error)
}

// Summarizer condenses cut history into a summary; previous is the summary it extends, if any.
type Summarizer interface {
	// Summarize extends previous with msgs and says what the call used (zero when not known).
	Summarize(ctx context.Context, previous string, msgs []*carryon.Message) (string, carryon.Usage, error)
}

// Config shapes the builder; zero values take the defaults.
type Config struct {
	SystemPrompt string
	// Budget is the most input tokens a context may hold (default 16000).
	Budget int
	// Window is how many recent messages are read (default 200); older ones are reached only
	// through summaries.
	Window int
	// ToolDigest is how many recent tool calls are listed (default 8).
	ToolDigest int
	// KeepShare is the share of the message budget kept when history is cut, so that the next
	// turns fit without another summary (default 0.6).
	KeepShare float64
	// LongTerm fills the long_term_memory part with the session owner's items most relevant to
	// the last user message.
	LongTerm bool
	// LongTermShare is the share of the budget long-term memory may take (default 0.1).
	LongTermShare float64
	// LongTermItems is how many long-term memory items are looked up (default 8).
	LongTermItems int
	// SummaryBudget bounds the input tokens of one summarizer request (default Budget): cut
	// history that does not fit in one is summarized in chunks, each extending the summary of
	// the chunks before it.
	SummaryBudget int
	// SummaryTimeout bounds the summarizer's calls of one summary (every chunk of it) together
	// (default 2 minutes): one that takes longer fails as a failing summarizer does, storing
	// nothing.
	SummaryTimeout time.Duration
}

// Builder builds contexts.
type Builder struct {
	cfg        Config
	src        Source
	summarizer Summarizer
}

// New returns a builder; summarizer may be nil.
func New(cfg Config, src Source, summarizer Summarizer) *Builder {
	if cfg.SystemPrompt == "" {
		cfg.SystemPrompt = DefaultSystemPrompt
	}
	if cfg.Budget <= 0 {
		cfg.Budget = 16000
	}
	if cfg.Window <= 0 {
		cfg.Window = 200
	}
	if cfg.ToolDigest <= 0 {
		cfg.ToolDigest = 8
	}
	if cfg.KeepShare <= 0 || cfg.KeepShare > 1 {
		cfg.KeepShare = 0.6
	}
	if cfg.LongTermShare <= 0 || cfg.LongTermShare > 1 {
		cfg.LongTermShare = 0.1
	}
	if cfg.LongTermItems <= 0 {
		cfg.LongTermItems = 8
	}
	if cfg.SummaryBudget <= 0 {
		cfg.SummaryBudget = cfg.Budget
	}
	if cfg.SummaryTimeout <= 0 {
		cfg.SummaryTimeout = 2 * time.Minute
	}
	return &Builder{cfg: cfg, src: src, summarizer: summarizer}
}

// Options shape one build.
type Options struct {
	// Model selects the tokenizer.
	Model string
	// Summarize asks the summarizer for a summary of cut history (a run does; a preview does not).
	Summarize bool
}

// Build assembles the context of a session as the model would get it now.
func (b *Builder) Build(ctx context.Context, sessionID string, opt Options) (*Context, error) {
	req := carryon.ContextSnapshotRequest{Messages: b.cfg.Window, Actions: b.cfg.ToolDigest}
	if b.cfg.LongTerm {
		req.LongTermItems, req.LongTermQuery = b.cfg.LongTermItems, longTermQuery
	}
	snap, err := b.src.ContextSnapshot(ctx, sessionID, req)
	if err != nil {
		return nil, err
	}
	view := snap.View
	counter := CounterFor(opt.Model)
	out := &Context{ContextPreview: carryon.ContextPreview{
		SessionID: view.ID, Version: view.Version, Model: opt.Model, Encoding: counter.Encoding,
		Estimated: counter.Estimated, Budget: b.cfg.Budget,
	}, WorkingMemory: view.WorkingMemory, OwnerID: view.OwnerID}
	sections := []carryon.ContextPart{
		{Name: "system_prompt", Content: b.cfg.SystemPrompt},
		{Name: "working_memory", Content: HeadingWorkingMemory + "\n" + RenderWorkingMemory(view.WorkingMemory)},
		b.longTerm(ctx, view, snap.LongTerm, counter),
	}
	if acts := snap.Actions; len(acts) > 0 {
		sections = append(sections, carryon.ContextPart{Name: "tool_digest", Content: HeadingTools + "\n" + RenderToolDigest(acts), Items: len(acts)})
	}
	// The newest summary in the window covers everything up to its CoversTo.
	var summary *carryon.Message
	var convo []*carryon.Message
	for _, m := range view.Messages {
		if m.Kind == carryon.KindSummary {
			summary = m
		}
	}
	for _, m := range view.Messages {
		if m.Kind != carryon.KindSummary && (summary == nil || m.Seq > summary.CoversTo) && !metadataOnly(m) {
			convo = append(convo, m)
		}
	}
	summaryText := ""
	if summary != nil {
		summaryText, out.SummaryCoversTo = summary.Content, summary.CoversTo
	}
	fixed := 0
	for i := range sections {
		sections[i].Tokens = counter.Count(sections[i].Content) // once: the parts below reuse it
		fixed += sections[i].Tokens
	}
	oldSummary := counter.Count(summaryPart(summaryText, out.SummaryCoversTo))
	avail := b.cfg.Budget - fixed - oldSummary - perMessage

	keep := max(fit(counter, convo, avail), min(1, len(convo)))
	if keep < len(convo) {
		// History is cut: with a summarizer, cut deeper so the next turns fit without another summary.
		summarized := false
		if opt.Summarize && b.summarizer != nil {
			deep := max(fit(counter, convo, int(float64(avail)*b.cfg.KeepShare)), 1)
			err := b.summarize(ctx, counter, out, &summaryText, convo[:len(convo)-deep])
			switch {
			case err == nil:
				summarized, keep = true, deep
			case ctx.Err() != nil:
				return nil, err
			default:
				// A failing summarizer must not fail this run and every later one: go on with
				// the window that fits, unsummarized, and say so.
				out.Notes = append(out.Notes, "summarizing the older messages failed ("+clip(err.Error(), 200)+
					"); they are left out without a summary this time")
			}
		}
		if summarized {
			// The new summary may be longer than the old one: what is kept must still fit.
			// (Rare, with KeepShare well below 1: messages dropped here are counted as unsummarized.)
			grown := counter.Count(summaryPart(summaryText, out.SummaryCoversTo)) - oldSummary
			if k := max(fit(counter, convo, avail-grown), 1); k < keep {
				out.Unsummarized, keep = keep-k, k
			}
		} else {
			out.Unsummarized = len(convo) - keep
		}
	}
	convo = convo[len(convo)-keep:]
	for len(convo) > 0 && convo[0].Role == carryon.RoleTool {
		convo = convo[1:] // its call was cut with the older history
	}
	convo, notes := pairTools(convo)
	out.Notes = append(out.Notes, notes...)
	if s := summaryPart(summaryText, out.SummaryCoversTo); s != "" {
		sections = append(sections, carryon.ContextPart{Name: "summary", Content: s, Tokens: counter.Count(s)})
	}
	var sys []string
	for i := range sections {
		if i == 0 {
			sections[i].Tokens += perMessage // the system message's framing, so the parts add up
		}
		out.Tokens += sections[i].Tokens
		if sections[i].Content != "" {
			sys = append(sys, sections[i].Content)
		}
	}
	out.System = strings.Join(sys, "\n\n")
	msgPart := carryon.ContextPart{Name: "messages", Items: len(convo)}
	for _, m := range convo {
		msgPart.Tokens += counter.message(m)
		out.Messages = append(out.Messages, toModel(m))
	}
	// (An assistant message that lost unanswered calls is counted as stored: a little over.)
	if len(convo) > 0 {
		out.FirstSeq, out.LastSeq = convo[0].Seq, convo[len(convo)-1].Seq
	}
	out.Tokens += msgPart.Tokens
	out.Parts = append(sections, msgPart)
	if out.Messages == nil {
		out.Messages = []carryon.ModelMessage{}
	}
	return out, nil
}

// fit returns how many of the newest messages fit in budget tokens.
func fit(c *Counter, msgs []*carryon.Message, budget int) int {
	used := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		used += c.message(msgs[i])
		if used > budget {
			return len(msgs) - 1 - i
		}
	}
	return len(msgs)
}

func summaryPart(text string, coversTo int64) string {
	if text == "" {
		return ""
	}
	return HeadingSummary + " (messages 1–" + itoa(coversTo) + ")\n" + text
}

// toModel converts a stored message to the model's form.
func toModel(m *carryon.Message) carryon.ModelMessage {
	out := carryon.ModelMessage{Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
	if len(m.ToolCalls) > 0 {
		var calls []carryon.ToolCall
		_ = json.Unmarshal(m.ToolCalls, &calls)
		for _, c := range calls {
			out.ToolCalls = append(out.ToolCalls, carryon.ModelToolCall(c))
		}
	}
	return out
}

// metadataOnly says whether a message carries nothing a model reads (no content, no tool calls:
// only metadata, such as another runtime's event record); it stays in the session and out of the
// context. A tool result without content stays in: its call needs an answer.
func metadataOnly(m *carryon.Message) bool {
	return m.Content == "" && len(m.ToolCalls) == 0 && m.Role != carryon.RoleTool
}
