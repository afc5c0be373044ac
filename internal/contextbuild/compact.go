package contextbuild

import (
	"context"
	"encoding/json"

	"github.com/carryon-hub/carryon"
)

// CompactPlan is a compaction the builder prepared and nothing has stored yet: the summary
// message to append (kind summary, covering 1..CoversTo, its metadata the compaction's) and
// the facts it records.
type CompactPlan struct {
	Summary carryon.NewMessage
	Meta    carryon.CompactionMeta
	// Usage is what the summarizer's calls used.
	Usage carryon.Usage
}

// instructed is a Summarizer that takes the caller's instructions for one compaction.
type instructed interface {
	WithInstructions(instructions string) Summarizer
}

// Compact asks the summarizer for a summary of the session's conversation but its keepLast
// newest messages (the summary before them extended, as a run's cut history is), and returns
// what to store: it writes nothing, so a summarizer that fails or times out leaves the session
// as it was. The cut never separates an assistant's tool calls from their results: when the
// message after it is a tool result, or the last covered one asks for results not stored yet,
// it moves to older messages. modelName is recorded as the summary's model and selects the
// tokenizer of the counts. EINVALID when nothing is left to summarize, EUNAVAILABLE when the
// summarizer fails.
func (b *Builder) Compact(ctx context.Context, sessionID, modelName string, keepLast int, instructions string) (*CompactPlan, error) {
	if keepLast < 0 {
		return nil, carryon.Errorf(carryon.EINVALID, "keep_last must not be negative, got %d", keepLast)
	}
	return b.compact(ctx, sessionID, modelName, instructions, func(*Counter, []*carryon.Message) int { return keepLast })
}

// AutoCompact prepares the automatic compaction of a session whose context built (by Build, for
// modelName) holds more than threshold tokens: the summary covers the conversation but its
// newest messages that fit in KeepShare of what the threshold leaves beside the context's other
// parts (the system prompt, the working memory, the long-term memory and the tool digest), so
// that the next turns fit under the threshold without another compaction. Like Compact it writes
// nothing; its errors are Compact's.
func (b *Builder) AutoCompact(ctx context.Context, sessionID, modelName string, built *Context, threshold int) (*CompactPlan, error) {
	fixed := 0
	for _, p := range built.Parts {
		if p.Name != "messages" && p.Name != "summary" {
			fixed += p.Tokens
		}
	}
	room := int(float64(threshold-fixed) * b.cfg.KeepShare)
	return b.compact(ctx, sessionID, modelName, "", func(c *Counter, convo []*carryon.Message) int {
		if room <= 0 {
			return 0
		}
		return fit(c, convo, room)
	})
}

// compact is Compact with keep saying how many of the newest messages of the conversation
// (those after the newest summary) stay out of the summary.
func (b *Builder) compact(ctx context.Context, sessionID, modelName, instructions string, keep func(*Counter, []*carryon.Message) int) (*CompactPlan, error) {
	if b.summarizer == nil {
		return nil, carryon.Errorf(carryon.ENOTIMPLEMENTED, "this server has no summarizer for session %s", sessionID)
	}
	snap, err := b.src.ContextSnapshot(ctx, sessionID, carryon.ContextSnapshotRequest{Messages: b.cfg.Window})
	if err != nil {
		return nil, err
	}
	var summary *carryon.Message
	for _, m := range snap.View.Messages {
		if m.Kind == carryon.KindSummary {
			summary = m
		}
	}
	var convo []*carryon.Message
	for _, m := range snap.View.Messages {
		if m.Kind != carryon.KindSummary && (summary == nil || m.Seq > summary.CoversTo) && !metadataOnly(m) {
			convo = append(convo, m)
		}
	}
	counter := CounterFor(modelName)
	keepLast := keep(counter, convo)
	n := max(len(convo)-keepLast, 0)
	for n > 0 && (n < len(convo) && convo[n].Role == carryon.RoleTool || n == len(convo) && len(convo[n-1].ToolCalls) > 0) {
		n--
	}
	if n == 0 {
		return nil, carryon.Errorf(carryon.EINVALID, "session %s has no messages to compact: %d are newer than its last summary, and keep_last %d keeps them (with their tool calls and results together)",
			sessionID, len(convo), keepLast)
	}
	out := &Context{}
	text := ""
	if summary != nil {
		text, out.SummaryCoversTo = summary.Content, summary.CoversTo
	}
	before := counter.Count(summaryPart(text, out.SummaryCoversTo))
	for _, m := range convo {
		before += counter.message(m)
	}
	run := *b
	if in, ok := b.summarizer.(instructed); ok && instructions != "" {
		run.summarizer = in.WithInstructions(instructions)
	}
	if err := run.summarize(ctx, counter, out, &text, convo[:n]); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, carryon.Errorf(carryon.EUNAVAILABLE, "the summarizer failed, nothing was stored: %s", clip(carryon.ErrorMessage(err), 300))
	}
	if text == "" {
		return nil, carryon.Errorf(carryon.EUNAVAILABLE, "the summarizer answered an empty summary, nothing was stored")
	}
	after := counter.Count(summaryPart(text, out.SummaryCoversTo))
	for _, m := range convo[n:] {
		after += counter.message(m)
	}
	plan := &CompactPlan{Summary: *out.NewSummary, Usage: out.SummaryUsage,
		Meta: carryon.CompactionMeta{Model: modelName, Instructions: instructions, TokensBefore: before, TokensAfter: after}}
	plan.Summary.Metadata, _ = json.Marshal(map[string]any{"compaction": plan.Meta})
	return plan, nil
}
