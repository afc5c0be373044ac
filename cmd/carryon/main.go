// Command carryon is the carryon server and its command-line client: `carryon serve` runs the
// session hub; the other subcommands manage users on the data directory or talk to a server.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/carryon-hub/carryon"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if wantsJSON(os.Args[1:]) {
		os.Exit(reportJSON(err, os.Stderr))
	}
	os.Exit(report(err, os.Stderr))
}

// wantsJSON says whether the command line asks for JSON (--json, before any "--").
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-json=true":
			return true
		}
	}
	return false
}

// reportJSON is report for a command run with --json: the error as one JSON object on w,
// {"error": {"code", "message", "hint"?, "current_version"?, "active_run_id"?}}, with the
// same exit status. A mistake in the command line has the code "usage", any other error
// that is not carryon's the code "error".
func reportJSON(err error, w io.Writer) int {
	if err == nil {
		return 0
	}
	type body struct {
		Code           string `json:"code"`
		Message        string `json:"message"`
		Hint           string `json:"hint,omitempty"`
		CurrentVersion int64  `json:"current_version,omitempty"`
		ActiveRunID    string `json:"active_run_id,omitempty"`
	}
	first, hint, _ := strings.Cut(err.Error(), "\n")
	b := body{Code: "error", Message: first, Hint: strings.TrimSpace(hint)}
	var u usageError
	if e, ok := carryon.AsError(err); ok {
		b.Code, b.Message, b.CurrentVersion, b.ActiveRunID = e.Code, e.Message, e.CurrentVersion, e.ActiveRunID
	} else if errors.As(err, &u) {
		b.Code, b.Message, b.Hint = "usage", u.msg, ""
	}
	enc := json.NewEncoder(w)
	_ = enc.Encode(map[string]body{"error": b})
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

// report states err on w as "carryon: <sentence>" and returns the exit status: 0 without an
// error, 2 for a mistake in the command line, 1 for anything else.
func report(err error, w io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(w, "carryon:", err)
	var u usageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

// usageError is a mistake in the command line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// env is how the program reads its environment (os.Getenv, or a map in tests).
type env func(string) string

// run is the whole program; tests call it with their own arguments, environment and streams.
func run(ctx context.Context, args []string, getenv env, stdin io.Reader, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, getenv, stdin, stdout, stderr)
	if errors.Is(err, errHelpShown) {
		return nil
	}
	return err
}

// dispatch runs the command args name.
func dispatch(ctx context.Context, args []string, getenv env, stdin io.Reader, stdout, stderr io.Writer) error {
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
	case "schedules":
		return runSchedules(ctx, rest, getenv, stdout, stderr)
	case "webhooks":
		return runWebhooks(ctx, rest, getenv, stdout, stderr)
	case "chat":
		return runChat(ctx, rest, getenv, stdin, stdout, stderr)
	case "run":
		return runOnce(ctx, rest, getenv, stdin, stdout, stderr)
	case "demo":
		return runDemo(ctx, rest, getenv, stdout, stderr)
	case "runs":
		return runRuns(ctx, rest, getenv, stdout, stderr)
	case "context":
		return runContext(ctx, rest, getenv, stdout, stderr)
	case "memory":
		return runLongTerm(ctx, rest, getenv, stdout, stderr)
	case "mcp":
		return runMCP(ctx, rest, getenv, stdin, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, rest, getenv, stdout, stderr)
	case "copy":
		return runCopy(ctx, rest, getenv, stdout, stderr)
	case "stats":
		return runStats(ctx, rest, getenv, stdout)
	case "usage":
		return runUsageCmd(ctx, rest, getenv, stdout)
	case "backup":
		return runBackup(ctx, rest, getenv, stdout)
	case "restore":
		return runRestore(ctx, rest, getenv, stdout)
	case "agents":
		return runAgents(ctx, rest, getenv, stdout)
	case "bench":
		return runBench(ctx, rest, getenv, stdout, stderr)
	case "version":
		return runVersion(rest, getenv, stdout)
	case "openapi":
		return runOpenAPI(rest, getenv, stdout)
	case "help", "-h", "-help", "--help":
		if len(rest) == 0 || cmd != "help" {
			fmt.Fprint(stdout, usage)
			return nil
		}
		if rest[0] == "help" {
			return usagef("usage: carryon help COMMAND")
		}
		return dispatch(ctx, []string{rest[0], "--help"}, getenv, stdin, stdout, stderr)
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
  carryon users rm NAME                                      forget a user and everything of theirs
  carryon stats [--json]                                     sizes per table and per user
  carryon usage [--user USER] [--session ID] [--days N]      tokens and USD per day, with the budgets
  carryon sessions ls|show|close|restore|fork|rm|export ...  manage sessions on a server
  carryon schedules create|ls|get|pause|resume|rm|run ...    runs a session starts by itself (cron, every, at)
  carryon webhooks create|ls|get|rm|rotate|deliveries ...    signed POSTs to a URL when runs end or wait
  carryon chat [--session ID]                                talk to the agent, line by line
  carryon run [--session ID] MESSAGE...                      one run, streamed; exit 1 unless it succeeds
  carryon demo                                               the seed's demo: continue a task from a new process
  carryon runs ls --session ID | runs show RUN_ID            a session's runs; a run and its tool journal
  carryon context SESSION_ID                                 what the model would be sent now, with tokens
  carryon memory put|get|rm|ls|search ...                    the user's long-term memory (namespaces, search)
  carryon agents check FILE                                  validate an agents file; print every tool's rules
  carryon mcp [--server URL] [--key KEY]                     the MCP server over stdio, for desktop clients
  carryon migrate [--data DIR] [--db DSN]                    bring the database schema up to date
  carryon backup --to FILE [--data DIR]                      a consistent copy of a live SQLite deployment
  carryon restore --from FILE [--data DIR]                   a backup into an empty data directory
  carryon copy --from SQLITE_FILE --to postgres://...        move a deployment to an empty PostgreSQL
  carryon bench --embedded | --url URL [--scenario turn] ...  a load generator: throughput, latency, memory
  carryon openapi                                            print the server's OpenAPI document
  carryon version                                            print the version
  carryon help [COMMAND]                                     this text, or a command's usage, examples and flags

Run "carryon help COMMAND" (or "carryon COMMAND --help") for a command's usage, examples and
flags. A flag its help marks "(env CARRYON_…)" can also be set by that environment variable; the
command line wins.
`
