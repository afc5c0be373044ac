package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/carryon-hub/carryon"
)

const usageCmdUsage = `usage: carryon usage [--user USER] [--session ID] [--days N] [--json]
  What model calls cost, from a running server: today's and this month's spend (UTC) with the
  budgets, then a table of the last N days (default 30, at most 366; zeros included). The
  caller's own (GET /v1/me/usage); --user an admin's view of another user (GET
  /v1/users/{id}/usage); --session a session's, with its budget (GET /v1/sessions/{id}/usage).
  USD is 0 unless the agents file gives the models' prices.

Examples:
  carryon usage
  carryon usage --days 7
  carryon usage --user alice --json
  carryon usage --session sess_...`

func runUsageCmd(ctx context.Context, args []string, getenv env, stdout io.Writer) error {
	fs := newFlagSet("usage", usageCmdUsage, stdout)
	var cf clientFlags
	cf.register(fs.FlagSet, getenv)
	user := fs.String("user", "", "the user (id or name) whose usage to show; admins only")
	sessionID := fs.String("session", "", "the session whose usage to show")
	days := fs.Int("days", carryon.DefaultUsageDays, "how many UTC days, today included")
	asJSON := fs.Bool("json", false, "print JSON")
	if len(args) > 0 && isHelp(args[0]) {
		return fs.help()
	}
	pos, err := fs.parse(getenv, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *user != "" && *sessionID != "" {
		return fs.misuse()
	}
	o := carryon.UsageOptions{Days: *days}
	if err := o.Check(); err != nil || *days == 0 {
		return usagef("--days must be a whole number from 1 to %d", carryon.MaxUsageDays)
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	if *sessionID != "" {
		u, err := c.SessionUsage(ctx, *sessionID, o)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, u)
		}
		fmt.Fprintf(stdout, "session  %s\nspent    %s\nbudget   %s\n", u.SessionID, spendText(u.Spend), budgetText(u.Budget))
		return printDays(stdout, u.Days)
	}
	var u *carryon.UserUsage
	if *user != "" {
		u, err = c.UserUsage(ctx, *user, o)
	} else {
		u, err = c.Usage(ctx, o)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, u)
	}
	fmt.Fprintf(stdout, "user     %s\n", u.UserID)
	fmt.Fprintf(stdout, "today    %s  %s  budget %s\n", u.Today.Period, spendText(carryon.Spend{Tokens: u.Today.Tokens, USD: u.Today.USD}), budgetText(u.Budget.Day))
	fmt.Fprintf(stdout, "month    %s     %s  budget %s\n", u.Month.Period, spendText(carryon.Spend{Tokens: u.Month.Tokens, USD: u.Month.USD}), budgetText(u.Budget.Month))
	return printDays(stdout, u.Days)
}

// spendText is s as "N tokens, $X".
func spendText(s carryon.Spend) string { return fmt.Sprintf("%d tokens, $%.4f", s.Tokens, s.USD) }

// budgetText is b's limits and action, "none" for no budget.
func budgetText(b *carryon.Budget) string {
	if b.Empty() {
		return "none"
	}
	text := ""
	if b.Tokens != nil {
		text = fmt.Sprintf("%d tokens", *b.Tokens)
	}
	if b.USD != nil {
		if text != "" {
			text += " or "
		}
		text += fmt.Sprintf("$%g", *b.USD)
	}
	return text + ", then " + string(b.Action())
}

// printDays is a table of days, oldest first.
func printDays(w io.Writer, days []carryon.DaySpend) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DATE\tTOKENS\tINPUT\tOUTPUT\tCACHED\tCALLS\tUSD")
	for _, d := range days {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%.4f\n", d.Date, d.Tokens, d.InputTokens, d.OutputTokens, d.CachedTokens, d.Calls, d.USD)
	}
	return tw.Flush()
}
