package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
)

const statsUsage = `usage: carryon stats [--json] [--data DIR] [--db DSN] [--workspaces DIR]
  How big the database is: every table of its schema with its rows and the bytes it and its
  indexes take (SQLite: the dbstat table's pages; PostgreSQL: pg_total_relation_size), then every
  user with what they own (sessions, messages, runs, actions, events, long-term items, request
  ids) and the bytes of their stored text, then every user's storage by kind (the kinds of GET
  /v1/sessions/{id}/storage, summed over their sessions, with long-term memory and workspace
  files), the users who store the most bytes first. It reads the whole database in one read
  transaction: run it when a minute of reading is fine. Works on the database itself, with or
  without a running server, like carryon users.

Examples:
  carryon stats
  carryon stats --json --db postgres://carryon@db.internal:5432/carryon --workspaces /srv/carryon/workspaces`

// statsReport is what carryon stats prints.
type statsReport struct {
	Tables  []store.TableStat   `json:"tables"`
	Users   []store.UserStat    `json:"users"`
	Storage []store.UserStorage `json:"storage"`
}

func runStats(ctx context.Context, args []string, getenv env, stdout io.Writer) error {
	fs := newFlagSet("stats", statsUsage, stdout)
	var sf storeFlags
	sf.register(fs.FlagSet, getenv)
	asJSON := fs.Bool("json", false, "print JSON")
	workspaces := fs.String("workspaces", "", "directory of the sessions' workspaces; default DATA/workspaces")
	if pos, err := fs.parse(getenv, args); err != nil {
		return err
	} else if len(pos) != 0 {
		return fs.misuse()
	}
	ws := *workspaces
	if ws == "" {
		ws = filepath.Join(sf.data, "workspaces")
	}
	st, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	var rep statsReport
	var owners map[string]string
	dirs, err := workspaceDirs(ws)
	if err != nil {
		return err
	}
	err = st.Read(ctx, func(tx store.Tx) error {
		var err error
		if rep.Tables, err = tx.TableStats(ctx); err != nil {
			return err
		}
		if rep.Users, err = tx.UserStats(ctx); err != nil {
			return err
		}
		if rep.Storage, err = tx.UserStorage(ctx); err != nil {
			return err
		}
		owners, err = tx.SessionOwners(ctx, dirs)
		return err
	})
	if err != nil {
		return err
	}
	if err := addWorkspaces(rep.Storage, ws, owners); err != nil {
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
	if err := tw.Flush(); err != nil {
		return err
	}
	// Storage by user and kind, a block per user, the most bytes first.
	tw = tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nSTORAGE\tKIND\tROWS\tBYTES")
	for _, u := range rep.Storage {
		fmt.Fprintf(tw, "%s\ttotal\t%d\t%s\n", u.Name, u.Rows, size(u.Bytes))
		for _, k := range u.Kinds {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", u.Name, k.Kind, k.Rows, size(k.Bytes))
		}
	}
	return tw.Flush()
}

// workspaceDirs returns the names of the directories in the workspaces directory ws (each a
// session's, named by its id); none when ws does not exist.
func workspaceDirs(ws string) ([]string, error) {
	entries, err := os.ReadDir(ws)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("workspaces: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// addWorkspaces adds to each user of users the workspace files of their sessions (owners: the
// owner of each session with a directory in ws), updates the totals and orders users by bytes
// again. A directory of no stored session counts for nobody (the sweeper removes it).
func addWorkspaces(users []store.UserStorage, ws string, owners map[string]string) error {
	files := map[string]carryon.StorageUse{}
	for id, owner := range owners {
		n, b, err := workspace.Usage(filepath.Join(ws, id))
		if err != nil {
			return err
		}
		u := files[owner]
		u.Rows += n
		u.Bytes += b
		files[owner] = u
	}
	for i := range users {
		u := files[users[i].UserID]
		u.Kind = carryon.StorageWorkspaceFiles
		users[i].Kinds = append(users[i].Kinds, u)
		users[i].Rows += u.Rows
		users[i].Bytes += u.Bytes
	}
	store.SortUserStorage(users)
	return nil
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
