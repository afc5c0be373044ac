package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/limits"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/users"
)

const usersUsage = `usage: carryon users COMMAND [flags]
  add NAME [--admin]   make a user; prints its API key, shown once, alone on the last line
  ls                   list the users
  keys ls USER         a user's keys (their prefixes; a key itself is never stored)
  keys add USER        another key for a user; prints it, shown once, alone on the last line
  keys revoke KEY_ID   revoke a key: requests with it are refused from now on
  rm USER              forget a user (by id or name) and everything of theirs: sessions with
                       their messages, runs, tool journal, events and workspace files, long-term
                       memory, request ids, keys; prints the receipt (counts; --json for JSON)
                       and logs one audit line on stderr. Given the id of a user whose forgetting
                       was cut off, it continues it (so does a running server's sweeper).
  limits USER [--set JSON]
                       a user's limits as JSON: those set for the user, the bytes stored and
                       the runs running; --set replaces them (docs/API.md, "Limits"), e.g.
                       '{"requests_per_second": 5, "request_burst": 20}', '{}' for the server's
                       defaults (a negative value or an unknown field is refused). "effective"
                       here knows no server flags: GET /v1/users/{id}/limits shows what applies.
  Works on the database itself (--data, --db), with or without a running server.

Examples:
  carryon users add alice
  carryon users add root --admin --db postgres://carryon@db.internal:5432/carryon
  carryon users keys add alice
  carryon users keys revoke key_...
  carryon users limits alice --set '{"max_stored_bytes": 1000000000}'
  carryon users rm bob --workspaces /srv/carryon/workspaces`

// runUsers manages users and keys directly on the database in the data directory, so it works
// with or without a running server (SQLite in WAL mode takes a second writer; Postgres is shared).
func runUsers(ctx context.Context, args []string, getenv env, stdout, stderr io.Writer) error {
	fs := newFlagSet("users", usersUsage, stdout)
	var sf storeFlags
	sf.register(fs.FlagSet, getenv)
	admin := fs.Bool("admin", false, "make the user an admin (users add)")
	workspaces := fs.String("workspaces", "", "directory of the sessions' workspaces (users rm); default DATA/workspaces")
	asJSON := fs.Bool("json", false, "print the receipt as JSON (users rm)")
	setLimits := fs.String("set", "", "the user's new limits as JSON (users limits)")
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
	case args[0] == "add" && len(pos) == 1, args[0] == "ls" && len(pos) == 0, args[0] == "rm" && len(pos) == 1,
		args[0] == "limits" && len(pos) == 1:
	case args[0] == "keys" && len(pos) == 2 && (pos[0] == "ls" || pos[0] == "add" || pos[0] == "revoke"):
	default:
		return fs.misuse()
	}
	st, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	ws := *workspaces
	if ws == "" {
		ws = filepath.Join(sf.data, "workspaces")
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	svc := users.New(st, nil).ForgetWith(sessions.New(st, sessions.Config{Workspaces: ws, Logger: log})).
		AnnounceKeys(filepath.Join(sf.data, users.EpochFile)) // a server on the same SQLite file drops its cached keys
	ctx = carryon.NewTrustedContext(ctx)

	switch {
	case args[0] == "add" && len(pos) == 1:
		u, secret, err := svc.CreateUser(ctx, carryon.NewUser{Name: pos[0], Admin: *admin})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created user %s (%s); its API key is shown once, on the next line:\n", u.Name, u.ID)
		_, err = fmt.Fprintln(stdout, secret)
		return err
	case args[0] == "limits" && len(pos) == 1:
		return userLimits(ctx, st, pos[0], *setLimits, stdout)
	case args[0] == "rm" && len(pos) == 1:
		r, err := svc.ForgetUser(ctx, pos[0])
		if err != nil {
			return err
		}
		return printReceipt(stdout, r, *asJSON)
	case args[0] == "ls" && len(pos) == 0:
		list, err := svc.ListUsers(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tADMIN\tCREATED")
		for _, u := range list {
			fmt.Fprintf(tw, "%s\t%s\t%v\t%s\n", u.ID, u.Name, u.Admin, u.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	case args[0] == "keys" && len(pos) == 2 && pos[0] == "ls":
		keys, err := svc.ListKeys(ctx, pos[1])
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tPREFIX\tCREATED\tREVOKED")
		for _, k := range keys {
			revoked := "-"
			if k.RevokedAt != nil {
				revoked = k.RevokedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s…\t%s\t%s\n", k.ID, k.Prefix, k.CreatedAt.Format(time.RFC3339), revoked)
		}
		return tw.Flush()
	case args[0] == "keys" && len(pos) == 2 && pos[0] == "add":
		k, secret, err := svc.CreateKey(ctx, pos[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created key %s; the key is shown once, on the next line:\n", k.ID)
		_, err = fmt.Fprintln(stdout, secret)
		return err
	case args[0] == "keys" && len(pos) == 2 && pos[0] == "revoke":
		if err := svc.RevokeKey(ctx, pos[1], carryon.RetryOptions{}); err != nil {
			return err
		}
		_, err := fmt.Fprintf(stdout, "revoked key %s\n", pos[1])
		return err
	}
	return fs.misuse()
}

// userLimits prints a user's limits as JSON, after replacing them with set when it is not empty.
func userLimits(ctx context.Context, st store.Store, user, set string, stdout io.Writer) error {
	l := limits.New(limits.Config{Store: st})
	var out *carryon.UserLimits
	var err error
	if set == "" {
		out, err = l.GetLimits(ctx, user)
	} else {
		var in carryon.Limits
		dec := json.NewDecoder(strings.NewReader(set))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return usagef("--set: %v", err)
		}
		out, err = l.SetLimits(ctx, user, in)
	}
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// printReceipt prints what forgetting a user deleted: JSON, or one line per kind.
func printReceipt(w io.Writer, r *carryon.ForgetReceipt, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	d := r.Deleted
	fmt.Fprintf(w, "forgot user %s (%s to %s); deleted:\n", r.UserID, r.StartedAt.Format(time.RFC3339), r.FinishedAt.Format(time.RFC3339))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	for _, c := range []struct {
		n    int64
		what string
	}{{d.Sessions, "sessions"}, {d.Messages, "messages"}, {d.MessageDeletions, "message deletions"},
		{d.MemoryRevisions, "working memory revisions"}, {d.Runs, "runs"}, {d.Actions, "actions"},
		{d.Events, "run events"}, {d.Workspaces, "workspaces"}, {d.LongTermItems, "long-term memory items"},
		{d.RequestIDs, "request ids"}, {d.Keys, "keys"}} {
		fmt.Fprintf(tw, "%d\t %s\n", c.n, c.what)
	}
	return tw.Flush()
}
