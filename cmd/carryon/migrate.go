package main

import (
	"context"
	"fmt"
	"io"
)

// runMigrate opens the database, which applies every pending migration, and reports the result.
func runMigrate(ctx context.Context, args []string, getenv env, stdout, stderr io.Writer) error {
	fs := newFlagSet("migrate", stderr)
	var sf storeFlags
	sf.register(fs, getenv)
	if pos, err := parseFlags(fs, getenv, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("usage: carryon migrate [--data DIR] [--db DSN]")
	}
	st, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	_, err = fmt.Fprintln(stdout, "database schema is up to date")
	return err
}
