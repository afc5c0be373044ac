package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/carryon-hub/carryon"
)

const schedulesUsage = `usage: carryon schedules COMMAND [flags]
  create --session ID (--cron EXPR | --every DURATION | --at TIME) --message TEXT
         [--timezone ZONE] [--agent NAME] [--overlap skip|enqueue] [--catch-up none|latest]
         [--until TIME] [--paused]
                                  schedule runs on a session (TIME in RFC 3339)
  ls [--session ID] [--json]      the schedules of a session, or all of them, newest first
  get ID                          a schedule: its spec, next fire time and last tick (JSON)
  pause ID | resume ID            stop firing, fire again (from the next tick after now)
  rm ID                           delete a schedule (a run it started goes on)
  run ID                          start the schedule's run now, under its overlap policy
  The key's user's schedules, on a server (--server, --key). docs/SCHEDULES.md says how ticks,
  time zones, overlap and catch-up work.

Examples:
  carryon schedules create --session sess_... --cron "0 8 * * 1-5" --timezone Europe/Paris \
    --message "check my inbox and continue the task"
  carryon schedules create --session sess_... --every 15m --message "poll the build" --overlap enqueue
  carryon schedules ls --session sess_...
  carryon schedules pause sch_...
  carryon schedules run sch_...`

func runSchedules(ctx context.Context, args []string, getenv env, stdout, stderr io.Writer) error {
	fs := newFlagSet("schedules", schedulesUsage, stdout)
	var cf clientFlags
	cf.register(fs.FlagSet, getenv)
	session := fs.String("session", "", "the session (create; ls: only its schedules)")
	cronExpr := fs.String("cron", "", "a 5-field cron expression (create)")
	every := fs.String("every", "", "an interval such as 15m or 2h (create)")
	at := fs.String("at", "", "a time in RFC 3339, for one run (create)")
	zone := fs.String("timezone", "", "the IANA time zone the cron is read in; default UTC (create)")
	message := fs.String("message", "", "the message each run starts with (create)")
	agent := fs.String("agent", "", "the agent profile to run; default the session's (create)")
	overlap := fs.String("overlap", "", "skip (default) or enqueue: a tick while the session's previous run is going (create)")
	catchUp := fs.String("catch-up", "", "none (default) or latest: ticks missed while no scheduler ran (create)")
	until := fs.String("until", "", "no tick after this time, RFC 3339 (create)")
	paused := fs.Bool("paused", false, "create the schedule paused (create)")
	asJSON := fs.Bool("json", false, "print JSON (ls)")
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
	case "create", "ls":
		if len(pos) != 0 {
			return fs.misuse()
		}
	case "get", "pause", "resume", "rm", "run":
		if len(pos) != 1 {
			return fs.misuse()
		}
	default:
		return fs.misuse()
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	ss := c.Schedules()
	switch cmd {
	case "create":
		if *session == "" {
			return usagef("create needs --session")
		}
		in := carryon.NewSchedule{Cron: *cronExpr, Every: *every, Timezone: *zone, Message: *message, Agent: *agent,
			Overlap: *overlap, CatchUp: *catchUp, Paused: *paused}
		if in.At, err = optTime("--at", *at); err != nil {
			return err
		}
		if in.Until, err = optTime("--until", *until); err != nil {
			return err
		}
		sc, err := ss.Create(ctx, *session, in)
		if err != nil {
			return err
		}
		return printSchedule(stdout, sc)
	case "ls":
		all := &carryon.SchedulePage{Items: []*carryon.Schedule{}}
		for f := (carryon.ScheduleFilter{Limit: listPageSize}); ; {
			page, err := ss.List(ctx, *session, f)
			if err != nil {
				return err
			}
			all.Items = append(all.Items, page.Items...)
			if page.NextCursor == "" || page.NextCursor == f.Cursor {
				break
			}
			f.Cursor = page.NextCursor
		}
		if *asJSON {
			return printJSON(stdout, all)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSESSION\tSTATUS\tSPEC\tNEXT FIRE\tLAST\tMESSAGE")
		for _, sc := range all.Items {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", sc.ID, sc.SessionID, sc.Status, specText(sc), timeText(sc.NextFireAt), sc.LastOutcome, sc.Message)
		}
		return tw.Flush()
	case "get":
		sc, err := ss.Get(ctx, pos[0])
		if err != nil {
			return err
		}
		return printJSON(stdout, sc)
	case "pause", "resume":
		p := cmd == "pause"
		sc, err := ss.Update(ctx, pos[0], carryon.ScheduleUpdate{Paused: &p})
		if err != nil {
			return err
		}
		return printSchedule(stdout, sc)
	case "rm":
		if err := ss.Delete(ctx, pos[0], carryon.RetryOptions{}); err != nil {
			return err
		}
		_, err := fmt.Fprintf(stdout, "deleted %s\n", pos[0])
		return err
	case "run":
		run, err := ss.RunNow(ctx, pos[0], carryon.RetryOptions{RequestID: carryon.NewID("cli_")})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s %s on %s\n", run.ID, run.Status, run.SessionID)
		return err
	}
	return fs.misuse()
}

func optTime(flag, v string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, usagef("%s must be a time in RFC 3339, such as 2026-12-24T08:00:00+01:00: %v", flag, err)
	}
	return &t, nil
}

func specText(sc *carryon.Schedule) string {
	switch {
	case sc.Cron != "":
		return "cron " + sc.Cron + " " + sc.Timezone
	case sc.Every != "":
		return "every " + sc.Every
	case sc.At != nil:
		return "at " + sc.At.Format(time.RFC3339)
	}
	return ""
}

func timeText(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Local().Format(time.DateTime)
}

func printSchedule(w io.Writer, sc *carryon.Schedule) error {
	_, err := fmt.Fprintf(w, "%s %s %s on %s, next fire %s\n", sc.ID, sc.Status, specText(sc), sc.SessionID, timeText(sc.NextFireAt))
	return err
}
