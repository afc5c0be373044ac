package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// promptMessages is how many of the last messages continue_task shows.
const promptMessages = 10

func (s *server) addPrompts(srv *mcp.Server) {
	srv.AddPrompt(&mcp.Prompt{
		Name:        "continue_task",
		Title:       "Continue a task",
		Description: "Pick up a carryon session where it stands: its goal, next action, plan and last messages.",
		Arguments:   []*mcp.PromptArgument{{Name: "session_id", Description: "the session's id (sess_...)", Required: true}},
	}, s.continueTask)
}

func (s *server) continueTask(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	id := req.Params.Arguments["session_id"]
	if id == "" {
		return nil, s.protocolError(ctx, "prompts/get", "", carryon.Errorf(carryon.EINVALID, "continue_task needs session_id"))
	}
	v, err := s.sessions.Get(caller(ctx, req.Extra), id, carryon.GetOptions{Messages: promptMessages})
	if err != nil {
		return nil, s.protocolError(ctx, "prompts/get", "", err)
	}
	return &mcp.GetPromptResult{
		Description: "Continue " + v.ID,
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: renderContinue(v)}}},
	}, nil
}

// renderContinue is the text of continue_task: where the session stands and what to do next.
func renderContinue(v *carryon.SessionView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Continue the task of carryon session %s", v.ID)
	if v.Title != "" {
		fmt.Fprintf(&b, " (%q)", v.Title)
	}
	fmt.Fprintf(&b, ", now at version %d, status %s.\n\n", v.Version, v.Status)
	b.WriteString(contextbuild.HeadingWorkingMemory + "\n")
	b.WriteString(contextbuild.RenderWorkingMemory(v.WorkingMemory) + "\n\n")
	fmt.Fprintf(&b, "## Last messages (%d of %d)\n", len(v.Messages), v.MessageCount)
	if len(v.Messages) == 0 {
		b.WriteString("(none yet)\n")
	}
	for _, m := range v.Messages {
		fmt.Fprintf(&b, "[%d] %s: %s\n", m.Seq, m.Role, m.Content)
	}
	fmt.Fprintf(&b, "\nCarry on from the next action. Record what you do with append_messages and what changes in the plan "+
		"with update_working_memory on session_id %s (expected_version %d refuses the write if someone else moved the session on).", v.ID, v.Version)
	return b.String()
}
