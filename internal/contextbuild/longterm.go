package contextbuild

import (
	"context"
	"fmt"
	"strings"

	"github.com/carryon-hub/carryon"
)

// maxLongTermQuery bounds the part of the user's message used as the search query.
const maxLongTermQuery = 2000

// longTermQuery is the search text of a context's long-term memory: the last user message
// (summaries aside), clipped to maxLongTermQuery bytes.
func longTermQuery(view *carryon.SessionView) string {
	query := ""
	for _, m := range view.Messages {
		if m.Role == carryon.RoleUser && m.Kind != carryon.KindSummary {
			query = m.Content
		}
	}
	if len(query) > maxLongTermQuery {
		query = strings.ToValidUTF8(query[:maxLongTermQuery], "")
	}
	return query
}

// longTerm renders the owner's items most relevant to the last user message, one line each,
// "- namespace/key: text-or-value (score 0.73)", as many as fit in the long-term share of the
// budget. It renders nothing unless the caller in ctx owns the session: another user's memory is
// never searched for a session, and a session's owner's memory is never shown to anyone else.
func (b *Builder) longTerm(ctx context.Context, view *carryon.SessionView, items []*carryon.LongTermItem, counter *Counter) carryon.ContextPart {
	part := carryon.ContextPart{Name: "long_term_memory"}
	if !b.cfg.LongTerm || view.OwnerID == "" || carryon.UserIDFromContext(ctx) != view.OwnerID {
		return part
	}
	budget := int(float64(b.cfg.Budget) * b.cfg.LongTermShare)
	lines := []string{HeadingLongTerm}
	for _, it := range items {
		if it.OwnerID != "" && it.OwnerID != view.OwnerID {
			continue // defence in depth: the source must only return the owner's items
		}
		line := RenderLongTermItem(it)
		if counter.Count(strings.Join(append(lines, line), "\n")) > budget {
			break
		}
		lines = append(lines, line)
		part.Items++
	}
	if part.Items > 0 {
		part.Content = strings.Join(lines, "\n")
	}
	return part
}

// RenderLongTermItem writes one long-term memory item as a line of the context:
// "- namespace/key: text (score 0.73)", the value's JSON standing in for a missing text, and
// "(recent)" for an item found without a query.
func RenderLongTermItem(it *carryon.LongTermItem) string {
	body := it.Text
	if body == "" {
		body = string(it.Value)
	}
	score := "(recent)"
	if it.Score > 0 {
		score = fmt.Sprintf("(score %.2f)", it.Score)
	}
	return fmt.Sprintf("- %s/%s: %s %s", it.Namespace, it.Key, clip(body, 300), score)
}
