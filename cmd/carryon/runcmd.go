package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/carryon-hub/carryon"
)

const runUsage = `usage: carryon run [--session ID [--expected-version N]] [--multitask reject|enqueue|interrupt] MESSAGE...
  One run: the message goes to the session (a new one without --session) and the agent's work
  streams as it happens. When the run stops for a decision or a client tool's output, it asks on
  a terminal (as carryon chat does) and otherwise exits with the command that answers. The exit
  status is 1 unless the run succeeds; Ctrl-C cancels the run.

Examples:
  carryon run "Task: plan a picnic: pick a park, then buy food, then invite friends"
  carryon run --session sess_... continue the task
  carryon run --session sess_... --multitask interrupt stop, and summarise what you have`

// runOnce is `carryon run`: one message, one run, streamed.
func runOnce(ctx context.Context, args []string, getenv env, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", runUsage, stdout)
	var cf clientFlags
	cf.register(fs.FlagSet, getenv)
	sessionID := fs.String("session", "", "the session to send the message to; default a new one")
	multitask := fs.String("multitask", "", "when the session has a run going: reject (default), enqueue or interrupt")
	var vf versionFlag
	vf.register(fs.FlagSet, "with --session")
	pos, err := fs.parse(getenv, args)
	if err != nil {
		return err
	}
	expected, err := vf.get()
	if err != nil {
		return err
	}
	if expected != nil && *sessionID == "" {
		return usagef("--expected-version needs --session: a new session has no version yet")
	}
	message := strings.TrimSpace(strings.Join(pos, " "))
	if message == "" {
		return fs.misuse()
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	id, expected, err := openSession(ctx, c, *sessionID, clip(message, 60), expected, stdout)
	if err != nil {
		return err
	}
	runID, st, err := c.StartStream(ctx, id, carryon.NewRun{
		Message: message, Multitask: carryon.Multitask(*multitask), WriteOptions: carryon.WriteOptions{RequestID: carryon.NewID("req_"), ExpectedVersion: expected},
	})
	if err != nil {
		return versionHint(err, id)
	}
	fmt.Fprintf(stdout, "run: %s\n", runID)
	end, err := followRun(ctx, c, runID, 0, st, stdout)
	if err != nil {
		return err
	}
	if isTerminal(stdin) {
		if end, err = answerAndFollow(ctx, c, runID, end, lineReader(ctx, stdin, stdout, false), stdout); err != nil {
			return err
		}
	}
	return runFailure(runID, end)
}
