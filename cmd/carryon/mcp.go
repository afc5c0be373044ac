package main

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/carryon-hub/carryon/internal/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const mcpUsage = `usage: carryon mcp [--server URL] [--key KEY] [--data DIR] [--run-wait D]
  Serve carryon's MCP server over stdio (newline-delimited JSON-RPC on stdin and stdout), for
  desktop clients that start their servers as programs. It offers the same tools, resources and
  prompt as a server's /mcp, acting for the user of --key (or CARRYON_KEY), else of the local
  key file in --data.

  It talks to a running carryon server (--server) with the HTTP client the other commands use,
  and never opens the database itself: one process writes the data directory, the server's
  rules (ownership, versions, request ids) are applied once, in one place, and a desktop client
  can start as many of these as it likes. Start "carryon serve" first. Errors of the server
  come back as tool errors with carryon's code; a server that cannot be reached says so in the
  error's message. Logs go to stderr, never stdout.

Examples:
  carryon mcp
  carryon mcp --server https://carryon.example.com --key ck_...
  npx @modelcontextprotocol/inspector --cli carryon mcp --method tools/list

A Claude Desktop entry (claude_desktop_config.json):
  {"mcpServers": {"carryon": {"command": "carryon", "args": ["mcp"],
    "env": {"CARRYON_SERVER": "http://127.0.0.1:8420", "CARRYON_KEY": "ck_..."}}}}`

func runMCP(ctx context.Context, args []string, getenv env, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcp", mcpUsage, stdout)
	var cf clientFlags
	cf.register(fs.FlagSet, getenv)
	runWait := fs.Duration("run-wait", mcpserver.DefaultRunWait, "how long start_run waits for its run to end before it answers with the run id")
	if pos, err := fs.parse(getenv, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fs.misuse()
	}
	if *runWait <= 0 {
		return usagef("--run-wait must be positive, e.g. 25s")
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	srv := mcpserver.New(mcpserver.Config{Sessions: c, Runs: c, LongTerm: c.LongTerm(), Schedules: c.Schedules(), Webhooks: clientWebhooks{c.Webhooks()}, RunWait: *runWait, Compact: c.Compact, Extract: c.Extract,
		Logger: log, ShowInternalErrors: true})
	t := &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopCloser{stdout}}
	err = srv.Run(ctx, t)
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil // the client closed stdin, or a signal: a clean end
	}
	return err
}

// nopCloser is a writer whose Close does nothing: the program's stdout outlives the MCP session.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
