package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/carryon-hub/carryon"
)

const runsUsage = `usage: carryon runs COMMAND [flags]
  ls --session ID [--limit N] [--json]     a session's runs, newest first
  show RUN_ID [--json]                     a run and its tool journal
  approve RUN_ID [--action ID] [--decision approve|rerun|mark_done|skip] [--arguments JSON] [--result TEXT]
                                           decide the action a waiting_approval run stopped on
  reject RUN_ID [--action ID] [--reason TEXT]
                                           refuse it; the model is told, with the reason
  outputs RUN_ID --output [CALL_ID=]TEXT ...
                                           answer the client tool calls a requires_action run waits for

  approve and reject decide the run's waiting action when --action is not given; a tool that asks
  before every call is approved (or rejected), an action interrupted by a crash is rerun by
  default (--decision mark_done or skip). outputs takes one --output per waiting call; a bare
  TEXT answers a run that waits for exactly one. The run is queued to continue; follow it with
  carryon runs show.

Examples:
  carryon runs ls --session sess_...
  carryon runs show run_...
  carryon runs show run_... --json
  carryon runs approve run_...
  carryon runs approve run_... --arguments '{"env":"staging"}'
  carryon runs reject run_... --reason "not on a Friday"
  carryon runs outputs run_... --output call_1='{"temp":21}'`

func runRuns(ctx context.Context, args []string, getenv env, stdout, stderr io.Writer) error {
	fs := newFlagSet("runs", runsUsage, stdout)
	var cf clientFlags
	cf.register(fs.FlagSet, getenv)
	sessionID := fs.String("session", "", "the session whose runs to list (ls)")
	limit := fs.Int("limit", 20, "how many runs (ls)")
	asJSON := fs.Bool("json", false, "print JSON")
	var d decisionFlags
	d.register(fs.FlagSet)
	if len(args) == 0 {
		return fs.misuse()
	} else if isHelp(args[0]) {
		return fs.help()
	}
	pos, err := fs.parse(getenv, args[1:])
	if err != nil {
		return err
	}
	switch {
	case args[0] == "ls" && *sessionID != "" && len(pos) == 0:
	case args[0] == "show" && len(pos) == 1:
	case (args[0] == "approve" || args[0] == "reject" || args[0] == "outputs") && len(pos) == 1:
	default:
		return fs.misuse()
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	if args[0] != "ls" && args[0] != "show" {
		run, err := d.decide(ctx, c, args[0], pos[0])
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, run)
		}
		fmt.Fprintf(stdout, "run %s %s\n", run.ID, run.Status)
		return nil
	}
	if args[0] == "ls" {
		page, err := c.ListRuns(ctx, *sessionID, carryon.RunFilter{Limit: *limit})
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, page)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tSTEPS\tCREATED\tMESSAGE")
		for _, r := range page.Items {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", r.ID, r.Status, r.Step, r.CreatedAt.Local().Format(time.DateTime), clip(r.Message, 60))
		}
		return tw.Flush()
	}
	run, err := c.GetRun(ctx, pos[0])
	if err != nil {
		return err
	}
	acts, err := c.Actions(ctx, run.ID)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, map[string]any{"run": run, "actions": acts})
	}
	printRun(stdout, run)
	fmt.Fprintf(stdout, "journal  %d action(s)\n", len(acts))
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  STEP\tTOOL\tEFFECT\tSTATUS\tFINGERPRINT BEFORE → AFTER\tRESULT")
	for _, a := range acts {
		out := a.Result
		if a.Error != "" {
			out = "error: " + a.Error
		}
		fmt.Fprintf(tw, "  %d.%d\t%s\t%s\t%s\t%s → %s\t%s\n", a.Step, a.Index, a.Tool, a.Effect, a.Status,
			shortPrint(a.FingerprintBefore), shortPrint(a.FingerprintAfter), clip(out, 60))
	}
	return tw.Flush()
}

func printRun(w io.Writer, r *carryon.Run) {
	fmt.Fprintf(w, "run      %s  %s\nsession  %s\n", r.ID, r.Status, r.SessionID)
	fmt.Fprintf(w, "message  %s\n", clip(r.Message, 100))
	fmt.Fprintf(w, "model    %s  steps %d  attempt %d  tokens %d in / %d out\n", r.Model, r.Step, r.Attempt, r.Usage.InputTokens, r.Usage.OutputTokens)
	if r.Agent != "" {
		fmt.Fprintf(w, "agent    %s  %s\n", r.Agent, shortPrint(r.AgentDigest))
	}
	fmt.Fprintf(w, "created  %s", r.CreatedAt.Local().Format(time.DateTime))
	if r.FinishedAt != nil {
		fmt.Fprintf(w, "  finished %s (%s)", r.FinishedAt.Local().Format(time.DateTime), r.FinishedAt.Sub(r.CreatedAt).Round(time.Millisecond))
	}
	fmt.Fprintln(w)
	if r.Reply != "" {
		fmt.Fprintf(w, "reply    %s\n", clip(r.Reply, 200))
	}
	if r.Error != "" {
		fmt.Fprintf(w, "error    %s\n", clip(r.Error, 200))
	}
}

// shortPrint shortens a fingerprint such as sha256:<64 hex> to its first 12 digits.
func shortPrint(f string) string {
	if f == "" {
		return "-"
	}
	algo, sum, ok := strings.Cut(f, ":")
	if ok && len(sum) > 12 {
		return algo + ":" + sum[:12]
	}
	return f
}
