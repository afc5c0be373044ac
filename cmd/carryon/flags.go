package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// binding ties a flag to the environment variable that sets it when the command line does not.
type binding struct{ flag, env string }

// envBindings are the flags an environment variable can set, in every command that has the
// flag. The README's settings table documents them; TestEnvBindings checks that every row of
// that table is bound here and that every binding names a flag some command has.
var envBindings = []binding{
	// where the data is
	{flag: "data", env: "CARRYON_DATA"},
	{flag: "db", env: "CARRYON_DB"},
	{flag: "pg-max-conns", env: "CARRYON_PG_MAX_CONNS"},
	{flag: "read-dsn", env: "CARRYON_READ_DSN"},
	{flag: "read-max-lag", env: "CARRYON_READ_MAX_LAG"},
	{flag: "sqlite-synchronous", env: "CARRYON_SQLITE_SYNCHRONOUS"},
	// the client commands
	{flag: "server", env: "CARRYON_SERVER"},
	{flag: "key", env: "CARRYON_KEY"},
	// the server
	{flag: "addr", env: "CARRYON_ADDR"},
	{flag: "idle-ttl", env: "CARRYON_IDLE_TTL"},
	{flag: "purge-after", env: "CARRYON_PURGE_AFTER"},
	{flag: "closed-retention", env: "CARRYON_CLOSED_RETENTION"},
	{flag: "max-sessions-per-user", env: "CARRYON_MAX_SESSIONS_PER_USER"},
	{flag: "request-id-ttl", env: "CARRYON_REQUEST_ID_TTL"},
	{flag: "sweep-interval", env: "CARRYON_SWEEP_INTERVAL"},
	{flag: "require-version", env: "CARRYON_REQUIRE_VERSION"},
	{flag: "ui-local-key", env: "CARRYON_UI_LOCAL_KEY"},
	{flag: "max-body", env: "CARRYON_MAX_BODY"},
	{flag: "body-timeout", env: "CARRYON_BODY_TIMEOUT"},
	{flag: "max-requests-per-user", env: "CARRYON_MAX_REQUESTS_PER_USER"},
	{flag: "max-streams-per-user", env: "CARRYON_MAX_STREAMS_PER_USER"},
	{flag: "rate-per-user", env: "CARRYON_RATE_PER_USER"},
	{flag: "burst-per-user", env: "CARRYON_BURST_PER_USER"},
	{flag: "max-runs-per-user", env: "CARRYON_MAX_RUNS_PER_USER"},
	{flag: "max-stored-bytes-per-user", env: "CARRYON_MAX_STORED_BYTES_PER_USER"},
	{flag: "quota-recount", env: "CARRYON_QUOTA_RECOUNT"},
	{flag: "log-json", env: "CARRYON_LOG_JSON"},
	{flag: "lease-ttl", env: "CARRYON_LEASE_TTL"},
	{flag: "workers", env: "CARRYON_WORKERS"},
	{flag: "max-attempts", env: "CARRYON_MAX_ATTEMPTS"},
	{flag: "schedule-min-interval", env: "CARRYON_SCHEDULE_MIN_INTERVAL"},
	{flag: "no-scheduler", env: "CARRYON_NO_SCHEDULER"},
	{flag: "tool-output-timeout", env: "CARRYON_TOOL_OUTPUT_TIMEOUT"},
	{flag: "webhook-allow-http", env: "CARRYON_WEBHOOK_ALLOW_HTTP"},
	{flag: "webhook-allow-private", env: "CARRYON_WEBHOOK_ALLOW_PRIVATE"},
	{flag: "webhook-timeout", env: "CARRYON_WEBHOOK_TIMEOUT"},
	{flag: "webhook-retry-for", env: "CARRYON_WEBHOOK_RETRY_FOR"},
	{flag: "webhook-min-backoff", env: "CARRYON_WEBHOOK_MIN_BACKOFF"},
	{flag: "webhook-max-backoff", env: "CARRYON_WEBHOOK_MAX_BACKOFF"},
	{flag: "otlp-endpoint", env: "CARRYON_OTLP_ENDPOINT"},
	{flag: "trace-content", env: "CARRYON_TRACE_CONTENT"},
	// the agent
	{flag: "agents", env: "CARRYON_AGENTS"},
	{flag: "provider", env: "CARRYON_PROVIDER"},
	{flag: "model", env: "CARRYON_MODEL"},
	{flag: "scripted-delay", env: "CARRYON_SCRIPTED_DELAY"},
	{flag: "max-steps", env: "CARRYON_MAX_STEPS"},
	{flag: "run-token-budget", env: "CARRYON_RUN_TOKEN_BUDGET"},
	{flag: "context-budget", env: "CARRYON_CONTEXT_BUDGET"},
	{flag: "model-first-byte-timeout", env: "CARRYON_MODEL_FIRST_BYTE_TIMEOUT"},
	{flag: "model-idle-timeout", env: "CARRYON_MODEL_IDLE_TIMEOUT"},
	{flag: "model-timeout", env: "CARRYON_MODEL_TIMEOUT"},
	{flag: "model-max-output-bytes", env: "CARRYON_MODEL_MAX_OUTPUT_BYTES"},
	{flag: "workspaces", env: "CARRYON_WORKSPACES"},
}

// envOf returns the environment variable bound to a flag, "" for none.
func envOf(flagName string) string {
	for _, b := range envBindings {
		if b.flag == flagName {
			return b.env
		}
	}
	return ""
}

// bindEnv sets every flag of fs that has a binding and was not given on the command line from
// its variable, when that is set: the command line wins.
func bindEnv(fs *flag.FlagSet, getenv env) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := envOf(f.Name)
		if name == "" || given[f.Name] || err != nil {
			return
		}
		if v := getenv(name); v != "" {
			if e := fs.Set(f.Name, v); e != nil {
				err = usagef("%s=%q: %v", name, v, e)
			}
		}
	})
	return err
}

// errHelpShown is what a command returns after it printed its help: run returns nil for it.
var errHelpShown = errors.New("help shown")

// flagSet is a command's flags with the help that `carryon COMMAND --help` prints: the
// command's usage text, then its flags.
type flagSet struct {
	*flag.FlagSet
	usage  string
	stdout io.Writer
}

// newFlagSet returns the flags of a command (name is how the command is typed, "sessions ls")
// whose help is usage. They report errors instead of exiting, and print nothing themselves.
func newFlagSet(name, usage string, stdout io.Writer) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, usage: usage, stdout: stdout}
}

// parse parses flags that may come before or after positional arguments, then sets the flags
// the command line did not give from the environment. -h or --help prints the help instead.
func (fs *flagSet) parse(getenv env, args []string) ([]string, error) {
	var pos []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			return nil, fs.help()
		} else if err != nil {
			return nil, usagef("%v (\"carryon %s --help\" lists the flags)", err, fs.Name())
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return pos, bindEnv(fs.FlagSet, getenv)
}

// help prints the command's usage and flags to stdout and returns errHelpShown.
func (fs *flagSet) help() error {
	w := fs.stdout
	fmt.Fprintln(w, strings.TrimRight(fs.usage, "\n"))
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nFlags:")
	}
	fs.VisitAll(func(f *flag.Flag) {
		arg, text := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  --%s", f.Name)
		if arg != "" {
			fmt.Fprintf(w, " %s", arg)
		}
		fmt.Fprintf(w, "\n        %s", text)
		switch f.DefValue {
		case "", "0", "0s", "false":
		default:
			if g, ok := f.Value.(flag.Getter); ok && isString(g.Get()) {
				fmt.Fprintf(w, " (default %q)", f.DefValue)
			} else {
				fmt.Fprintf(w, " (default %s)", f.DefValue)
			}
		}
		if e := envOf(f.Name); e != "" {
			fmt.Fprintf(w, " (env %s)", e)
		}
		fmt.Fprintln(w)
	})
	return errHelpShown
}

func isString(v any) bool { _, ok := v.(string); return ok }

// misuse is the usage error of a command line the command does not take: its forms, without
// the examples and flags its help adds.
func (fs *flagSet) misuse() error {
	forms, _, _ := strings.Cut(fs.usage, "\n\n")
	cmd, _, _ := strings.Cut(fs.Name(), " ")
	return usagef("%s\n(\"carryon %s --help\" shows examples and the flags)", forms, cmd)
}

// isHelp reports whether a command's first argument asks for its help.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}
