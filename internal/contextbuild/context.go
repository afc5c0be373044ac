package contextbuild

import (
	"context"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model"
)

// Context is exactly what is sent to the model, with its accounting (the preview a client sees)
// and what only a run needs.
type Context struct {
	carryon.ContextPreview
	// NewSummary is the summary message the caller must store before sending (nil: none).
	NewSummary *carryon.NewMessage `json:"-"`
	// SummaryUsage is what the summarizer's calls of this build used (a run counts it in its
	// usage), whether or not they gave a summary.
	SummaryUsage carryon.Usage `json:"-"`
	// WorkingMemory is the document rendered into the context.
	WorkingMemory carryon.WorkingMemory `json:"-"`
	OwnerID       string                `json:"-"`
}

// Request returns the model request for this context.
func (c *Context) Request(tools []model.ToolSpec) model.Request {
	msgs := make([]model.Message, len(c.Messages))
	for i, m := range c.Messages {
		msgs[i] = model.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, tc := range m.ToolCalls {
			msgs[i].ToolCalls = append(msgs[i].ToolCalls, model.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
		}
	}
	return model.Request{Model: c.Model, System: c.System, Messages: msgs, Tools: tools}
}

// Preview returns the context of a session as the model would get it now, as
// GET /v1/sessions/{id}/context shows it: counted for modelName, and without asking for a
// summary (a preview stores nothing).
func (b *Builder) Preview(ctx context.Context, sessionID, modelName string) (*carryon.ContextPreview, error) {
	c, err := b.Build(ctx, sessionID, Options{Model: modelName})
	if err != nil {
		return nil, err
	}
	return &c.ContextPreview, nil
}
