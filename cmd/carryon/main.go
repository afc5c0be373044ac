// Command carryon is the carryon server and its command-line client: `carryon serve` runs the
// session hub; the other subcommands manage users on the data directory or talk to a server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "carryon:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is a mistake in the command line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// env is how the program reads its environment (os.Getenv, or a map in tests).
type env func(string) string

// run is the whole program; tests call it with their own arguments, environment and streams.
func run(ctx context.Context, args []string, getenv env, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usagef("no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return runServe(ctx, rest, getenv, stdout, stderr)
	case "users":
		return runUsers(ctx, rest, getenv, stdout, stderr)
	case "sessions":
		return runSessions(ctx, rest, getenv, stdout, stderr)
	case "chat":
		return runChat(ctx, rest, getenv, stdin, stdout, stderr)
	case "run":
		return runOnce(ctx, rest, getenv, stdout, stderr)
	case "demo":
		return runDemo(ctx, rest, getenv, stdout, stderr)
	case "runs":
		return runRuns(ctx, rest, getenv, stdout, stderr)
	case "context":
		return runContext(ctx, rest, getenv, stdout, stderr)
	case "memory":
		return runMemory(ctx, rest, getenv, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, rest, getenv, stdout, stderr)
	case "copy":
		return runCopy(ctx, rest, getenv, stdout, stderr)
	case "version":
		return runVersion(stdout)
	case "openapi": // not in the usage: CI lints the document it prints
		return runOpenAPI(stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return usagef("unknown command %q", cmd)
}

const usage = `carryon: the durable session hub for LLM agents.

Usage:
  carryon serve [--addr HOST:PORT] [--data DIR] [--db DSN]   run the server
  carryon users add NAME [--admin]                           make a user; prints its key last
  carryon users ls                                           list users
  carryon users keys ls|add|revoke ...                       manage API keys
  carryon sessions ls|show|close|restore|fork|rm|export ...  manage sessions on a server
  carryon chat [--session ID]                                talk to the agent, line by line
  carryon run [--session ID] MESSAGE...                      one run, streamed; exit 1 unless it succeeds
  carryon demo                                               the seed's demo: continue a task from a new process
  carryon runs ls --session ID | runs show RUN_ID            a session's runs; a run and its tool journal
  carryon context SESSION_ID                                 what the model would be sent now, with tokens
  carryon memory put|get|rm|ls|search ...                    the user's long-term memory (namespaces, search)
  carryon migrate [--data DIR] [--db DSN]                    bring the database schema up to date
  carryon copy --from SQLITE_FILE --to postgres://...        move a deployment to an empty PostgreSQL
  carryon version                                            print the version

Run "carryon COMMAND -h" for a command's flags. Every flag can also be set by an environment
variable: CARRYON_ADDR, CARRYON_DATA, CARRYON_DB, CARRYON_SERVER, CARRYON_KEY, ...
`
