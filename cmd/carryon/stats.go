package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/carryon-hub/carryon/internal/store"
)

const statsUsage = `usage: carryon stats [--json] [--data DIR] [--db DSN]
  How big the database is: every table of its schema with its rows and the bytes it and its
  indexes take (SQLite: the dbstat table's pages; PostgreSQL: pg_total_relation_size), then every
  user with what they own (sessions, messages, runs, actions, events, long-term items, request
  ids) and the bytes of their stored text. It reads the whole database in one read transaction:
  run it when a minute of reading is fine. Works on the database itself, with or without a
  running server, like carryon users.

Examples:
  carryon stats
  carryon stats --json --db postgres://carryon@db.internal:5432/carryon`

// statsReport is what carryon stats prints.
type statsReport struct {
	Tables []store.TableStat `json:"tables"`
	Users  []store.UserStat  `json:"users"`
}

func runStats(ctx context.Context, args []string, getenv env, stdout io.Writer) error {
	fs := newFlagSet("stats", statsUsage, stdout)
	var sf storeFlags
	sf.register(fs.FlagSet, getenv)
	asJSON := fs.Bool("json", false, "print JSON")
	if pos, err := fs.parse(getenv, args); err != nil {
		return err
	} else if len(pos) != 0 {
		return fs.misuse()
	}
	st, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	var rep statsReport
	err = st.Read(ctx, func(tx store.Tx) error {
		var err error
		if rep.Tables, err = tx.TableStats(ctx); err != nil {
			return err
		}
		rep.Users, err = tx.UserStats(ctx)
		return err
	})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tROWS\tBYTES")
	var rows, bytes int64
	for _, t := range rep.Tables {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", t.Name, t.Rows, size(t.Bytes))
		rows += t.Rows
		bytes += max(t.Bytes, 0)
	}
	fmt.Fprintf(tw, "total\t%d\t%s\n\n", rows, size(bytes))
	fmt.Fprintln(tw, "USER\tID\tSESSIONS\tMESSAGES\tRUNS\tACTIONS\tEVENTS\tLONG-TERM\tREQUEST IDS\tTEXT BYTES")
	for _, u := range rep.Users {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", u.Name, u.UserID, u.Sessions, u.Messages, u.Runs,
			u.Actions, u.Events, u.LongTermItems, u.RequestIDs, size(u.Bytes))
	}
	return tw.Flush()
}

// size writes a byte count for people: exact below 10 kB, else with one decimal in kB, MB or GB
// (powers of 1000); "-" when unknown.
func size(n int64) string {
	switch {
	case n < 0:
		return "-"
	case n < 10_000:
		return fmt.Sprintf("%d B", n)
	case n < 10_000_000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	case n < 10_000_000_000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f GB", float64(n)/1e9)
}
