package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/carryon-hub/carryon"
)

const sessionsUsage = `usage: carryon sessions COMMAND [flags]
  ls [--status active|closed|expired] [--limit N] [--json]
                                  the sessions, newest first: all of them, or the newest N
  show ID [--messages N]          a session, its working memory and its last messages
  close ID | restore ID | rm ID [--expected-version N]
                                  close (history kept, writes refused), reopen, delete
  fork ID [--at-version N] [--title T] [--expected-version N]
                                  a new session from this one, as it is or was
  export ID [-o FILE]             the session's bundle (docs/EXPORT.md): JSON Lines of every
                                  row it owns (messages with tombstones, working-memory
                                  revisions, runs with their journal and events, workspace
                                  files, a fork's parent as a reference) and a checksum
  import FILE [--keep-ids] [--parent ID] [--format carryon|openai] [--order asc|desc] [--request-id K]
                                  a new session of yours from a bundle (- reads stdin), or from
                                  OpenAI conversation items (GET /v1/conversations/{id}/items)
  compact ID [--keep-last N] [--instructions TEXT] [--expected-version N] [--json]
                                  the session's model summarizes its history but the last N
                                  messages; the context sends the summary in their place
                                  from then on (the history stays)
  compactions ID [--json]         the session's compactions, oldest first
  extract ID [--json]             learn facts about you from the session's turns since the last
                                  time into your long-term memory (its profile needs
                                  memory_extraction; docs/AGENTS.md)
  The key's user's sessions, on a server (--server, --key).

Examples:
  carryon sessions ls --status active
  carryon sessions show sess_... --messages 50
  carryon sessions fork sess_... --at-version 3 --title "try the other plan"
  carryon sessions close sess_... --expected-version 12
  carryon sessions compact sess_... --keep-last 10 --instructions "keep file names"
  carryon sessions export sess_... -o session.jsonl
  carryon --server https://other.example sessions import session.jsonl`

func runSessions(ctx context.Context, args []string, getenv env, stdout, stderr io.Writer) error {
	fs := newFlagSet("sessions", sessionsUsage, stdout)
	var cf clientFlags
	cf.register(fs.FlagSet, getenv)
	status := fs.String("status", "", "only sessions with this status (ls)")
	limit := fs.Int("limit", 0, "list only the newest N sessions; default all of them, page by page (ls)")
	asJSON := fs.Bool("json", false, "print JSON (ls, compact, compactions, extract)")
	nmsg := fs.Int("messages", 20, "how many recent messages to show (show)")
	atVersion := fs.Int64("at-version", 0, "fork the session as it was at this version (fork)")
	title := fs.String("title", "", "title of the fork (fork)")
	keepLast := fs.Int("keep-last", 0, "how many of the newest messages stay out of the summary (compact)")
	instructions := fs.String("instructions", "", "what the summary must keep, added to the summarizer's prompt (compact)")
	outFile := fs.String("o", "", "write the bundle to this file instead of stdout (export)")
	keepIDs := fs.Bool("keep-ids", false, "keep the bundle's ids; an id that exists refuses the import (import)")
	parent := fs.String("parent", "", "the session a fork's bundle is linked to (import; default its parent id)")
	format := fs.String("format", "", "carryon (a bundle, the default) or openai (conversation items) (import)")
	order := fs.String("order", "", "the order of OpenAI items in their pages: desc (default) or asc (import)")
	requestID := fs.String("request-id", "", "the import's request id: a repeat makes no second session (import)")
	var vf versionFlag
	vf.register(fs.FlagSet, "close, restore, rm, fork, compact")
	if len(args) == 0 {
		return fs.misuse()
	} else if isHelp(args[0]) {
		return fs.help()
	}
	pos, err := fs.parse(getenv, args[1:])
	if err != nil {
		return err
	}
	cmd := args[0]
	switch cmd {
	case "ls":
		if len(pos) != 0 {
			return fs.misuse()
		} else if *limit < 0 {
			return usagef("--limit must be 1 or more")
		}
	case "show", "close", "restore", "rm", "fork", "export", "import", "compact", "compactions", "extract":
		if len(pos) != 1 {
			return fs.misuse()
		}
	default:
		return fs.misuse()
	}
	expected, err := vf.get()
	if err != nil {
		return err
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	if cmd == "ls" {
		page, err := listSessions(ctx, c, carryon.SessionFilter{Status: carryon.SessionStatus(*status), Limit: *limit})
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, page)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tVERSION\tMESSAGES\tLAST ACTIVE\tTITLE")
		for _, s := range page.Items {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", s.ID, s.Status, s.Version, s.MessageCount, s.LastActiveAt.Local().Format(time.DateTime), s.Title)
		}
		return tw.Flush()
	}
	id := pos[0]
	switch cmd {
	case "show":
		v, err := c.Get(ctx, id, carryon.GetOptions{Messages: *nmsg})
		if err != nil {
			return err
		}
		return printView(stdout, v)
	case "close", "restore":
		f := c.Close
		if cmd == "restore" {
			f = c.Restore
		}
		s, err := f(ctx, id, carryon.WriteOptions{ExpectedVersion: expected})
		if err != nil {
			return versionHint(err, id)
		}
		_, err = fmt.Fprintf(stdout, "%s %s (version %d)\n", s.ID, s.Status, s.Version)
		return err
	case "rm":
		if err := c.Delete(ctx, id, carryon.WriteOptions{ExpectedVersion: expected}); err != nil {
			return versionHint(err, id)
		}
		_, err := fmt.Fprintf(stdout, "deleted %s\n", id)
		return err
	case "fork":
		s, err := c.Fork(ctx, id, carryon.ForkInput{AtVersion: *atVersion, Title: *title, WriteOptions: carryon.WriteOptions{ExpectedVersion: expected}})
		if err != nil {
			return versionHint(err, id)
		}
		_, err = fmt.Fprintf(stdout, "%s forked from %s at version %d\n", s.ID, id, s.ForkVersion)
		return err
	case "export":
		b, err := c.Export(ctx, id)
		if err != nil {
			return err
		}
		if *outFile == "" || *outFile == "-" {
			_, err = stdout.Write(b)
			return err
		}
		return os.WriteFile(*outFile, b, 0o600)
	case "import":
		in := carryon.ImportInput{Format: *format, KeepIDs: *keepIDs, Parent: *parent, Order: *order, RetryOptions: carryon.RetryOptions{RequestID: *requestID}}
		if id == "-" {
			in.Bundle, err = io.ReadAll(os.Stdin)
		} else {
			in.Bundle, err = os.ReadFile(id)
		}
		if err != nil {
			return err
		}
		res, err := c.Import(ctx, in)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s imported (%d messages, %d runs, %d files)\n", res.Session.ID, res.Counts["message"], res.Counts["run"], res.Counts["file"])
		return err
	case "compact":
		cp, err := c.Compact(ctx, id, carryon.CompactInput{KeepLast: *keepLast, Instructions: *instructions, WriteOptions: carryon.WriteOptions{ExpectedVersion: expected}})
		if err != nil {
			return versionHint(err, id)
		}
		if *asJSON {
			return printJSON(stdout, cp)
		}
		_, err = fmt.Fprintf(stdout, "%s compacted at version %d: messages %d-%d, %d tokens before, %d after\n%s\n",
			id, cp.Version, cp.CoversFrom, cp.CoversTo, cp.TokensBefore, cp.TokensAfter, cp.Summary)
		return err
	case "extract":
		x, err := c.Extract(ctx, id)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, x)
		}
		fmt.Fprintf(stdout, "%s: %d facts learned from messages %d-%d into %s\n", id, len(x.Facts), x.FromSeq+1, x.ToSeq, x.Namespace)
		for _, f := range x.Facts {
			how := "new"
			if f.ConsolidatedInto != "" {
				how = "into " + f.ConsolidatedInto
			}
			fmt.Fprintf(stdout, "  %s (%s)\n", f.Text, how)
		}
		return nil
	case "compactions":
		page, err := c.Compactions(ctx, id)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, page)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SEQ\tCOVERS\tVERSION\tTOKENS BEFORE\tAFTER\tMODEL\tCREATED")
		for _, cp := range page.Items {
			fmt.Fprintf(tw, "%d\t%d-%d\t%d\t%d\t%d\t%s\t%s\n", cp.Seq, cp.CoversFrom, cp.CoversTo, cp.Version, cp.TokensBefore, cp.TokensAfter, cp.Model, cp.CreatedAt.Local().Format(time.DateTime))
		}
		return tw.Flush()
	}
	return fs.misuse()
}

// listPageSize is how many sessions one request of `sessions ls` asks for.
const listPageSize = 100

// listSessions returns the sessions the filter selects, following next_cursor from page to
// page: all of them, or the newest f.Limit when it is set (with the cursor of the rest).
func listSessions(ctx context.Context, c carryon.SessionService, f carryon.SessionFilter) (*carryon.SessionPage, error) {
	all := &carryon.SessionPage{Items: []*carryon.Session{}}
	limit := f.Limit
	for {
		f.Limit = listPageSize
		if limit > 0 {
			f.Limit = min(listPageSize, limit-len(all.Items))
		}
		page, err := c.List(ctx, f)
		if err != nil {
			return nil, err
		}
		all.Items = append(all.Items, page.Items...)
		if page.NextCursor == f.Cursor && page.NextCursor != "" {
			return nil, fmt.Errorf("the server answered the cursor %q with the same cursor", f.Cursor)
		}
		f.Cursor = page.NextCursor
		if f.Cursor == "" || limit > 0 && len(all.Items) >= limit {
			all.NextCursor = f.Cursor
			return all, nil
		}
	}
}

func printView(w io.Writer, v *carryon.SessionView) error {
	fmt.Fprintf(w, "session  %s  %q\nstatus   %s  version %d  messages %d\n", v.ID, v.Title, v.Status, v.Version, v.MessageCount)
	fmt.Fprintf(w, "active   %s  expires %s\n", v.LastActiveAt.Local().Format(time.DateTime), v.ExpiresAt.Local().Format(time.DateTime))
	if v.ParentID != "" {
		fmt.Fprintf(w, "fork of  %s at version %d (seq %d)\n", v.ParentID, v.ForkVersion, v.ForkSeq)
	}
	if g := v.WorkingMemory.Goal(); g != "" {
		fmt.Fprintf(w, "goal     %s\n", g)
	}
	if a := v.WorkingMemory.NextAction(); a != "" {
		fmt.Fprintf(w, "next     %s\n", a)
	}
	if len(v.WorkingMemory) > 0 {
		b, _ := json.MarshalIndent(v.WorkingMemory, "         ", "  ")
		fmt.Fprintf(w, "memory   %s\n", b)
	}
	for _, m := range v.Messages {
		fmt.Fprintf(w, "#%-5d %-9s %s\n", m.Seq, m.Role, m.Content)
	}
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
