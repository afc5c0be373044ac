package contextbuild

import (
	"context"
	"fmt"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/model"
)

// SummarizePrompt starts the system prompt of a summary request.
const SummarizePrompt = "Summarize the conversation below for an agent that will continue it."

// ModelSummarizer asks a model for summaries.
type ModelSummarizer struct {
	Provider model.Provider
	Model    string
}

// Summarize asks the model to extend the previous summary with the given messages.
func (s ModelSummarizer) Summarize(ctx context.Context, previous string, msgs []*carryon.Message) (string, error) {
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
	res, err := model.Collect(s.Provider.Stream(ctx, req))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(res.Text), nil
}
