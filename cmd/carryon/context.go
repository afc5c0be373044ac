package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/carryon-hub/carryon"
)

const contextUsage = `usage: carryon context SESSION_ID [--json]
  What the model would be sent for the session now: the parts with their tokens, then the
  system message and the messages.

Examples:
  carryon context sess_...
  carryon context sess_... --json`

func runContext(ctx context.Context, args []string, getenv env, stdout, stderr io.Writer) error {
	fs := newFlagSet("context", contextUsage, stdout)
	var cf clientFlags
	cf.register(fs.FlagSet, getenv)
	asJSON := fs.Bool("json", false, "print the server's JSON")
	pos, err := fs.parse(getenv, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fs.misuse()
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	raw, err := c.Context(ctx, pos[0])
	if err != nil {
		return err
	}
	if *asJSON {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		return printJSON(stdout, v)
	}
	var cx carryon.ContextPreview
	if err := json.Unmarshal(raw, &cx); err != nil {
		return fmt.Errorf("the server's context: %w", err)
	}
	est := ""
	if cx.Estimated {
		est = ", estimated"
	}
	fmt.Fprintf(stdout, "context of %s at version %d for %s: %d of %d tokens (%s%s)\n", cx.SessionID, cx.Version, cx.Model, cx.Tokens, cx.Budget, cx.Encoding, est)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PART\tTOKENS\tITEMS")
	for _, p := range cx.Parts {
		items := ""
		if p.Items > 0 {
			items = fmt.Sprint(p.Items)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\n", p.Name, p.Tokens, items)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n--- system ---\n%s\n", strings.TrimSpace(cx.System))
	span := ""
	if cx.FirstSeq > 0 {
		span = fmt.Sprintf(" (seq %d–%d)", cx.FirstSeq, cx.LastSeq)
	}
	fmt.Fprintf(stdout, "\n--- messages%s ---\n", span)
	for _, m := range cx.Messages {
		text := m.Content
		for _, tc := range m.ToolCalls {
			text += fmt.Sprintf(" [call %s(%s)]", tc.Name, formatArgs(tc.Arguments))
		}
		who := m.Role
		if m.Name != "" {
			who += " " + m.Name
		}
		fmt.Fprintf(stdout, "%-9s %s\n", who+":", clip(text, 300))
	}
	return nil
}
