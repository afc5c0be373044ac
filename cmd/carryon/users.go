package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/users"
)

const usersUsage = `usage: carryon users COMMAND [flags]
  add NAME [--admin]   make a user; prints its API key, shown once, alone on the last line
  ls                   list the users
  keys ls USER         a user's keys (their prefixes; a key itself is never stored)
  keys add USER        another key for a user; prints it, shown once, alone on the last line
  keys revoke KEY_ID   revoke a key: requests with it are refused from now on
  Works on the database itself (--data, --db), with or without a running server.

Examples:
  carryon users add alice
  carryon users add root --admin --db postgres://carryon@db.internal:5432/carryon
  carryon users keys add alice
  carryon users keys revoke key_...`

// runUsers manages users and keys directly on the database in the data directory, so it works
// with or without a running server (SQLite in WAL mode takes a second writer; Postgres is shared).
func runUsers(ctx context.Context, args []string, getenv env, stdout, stderr io.Writer) error {
	fs := newFlagSet("users", usersUsage, stdout)
	var sf storeFlags
	sf.register(fs.FlagSet, getenv)
	admin := fs.Bool("admin", false, "make the user an admin (users add)")
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
	case args[0] == "add" && len(pos) == 1, args[0] == "ls" && len(pos) == 0:
	case args[0] == "keys" && len(pos) == 2 && (pos[0] == "ls" || pos[0] == "add" || pos[0] == "revoke"):
	default:
		return fs.misuse()
	}
	st, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	svc := users.New(st, nil)
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
