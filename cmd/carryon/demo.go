package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/client"
)

const demoUsage = `usage: carryon demo [--server URL] [--task TEXT]
  The seed's demo against a running server: a first request states a task and gets a session
  id; a new process that knows only that id says "continue the task", and its answer states the
  goal and the next action kept in the session's working memory.

Examples:
  carryon demo
  carryon demo --server http://127.0.0.1:9000 --task "Plan a picnic: pick a park, then buy food"`

const demoTask = "Write a short guide to brewing green tea: research the water temperature, then draft the steps, then proofread the guide"

// runDemo is the seed's demo: one process states a task without a session id; a second process,
// which knows only the session id, says "continue the task" and its answer knows the current
// goal and next action. The second process is this program again (CARRYON_BIN names another
// binary to run, for tests).
func runDemo(ctx context.Context, args []string, getenv env, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", demoUsage, stdout)
	var cf clientFlags
	cf.register(fs.FlagSet, getenv)
	cont := fs.String("continue", "", "(the demo's second process) continue the task of this session")
	taskMsg := fs.String("task", demoTask, "the task the first request states")
	pos, err := fs.parse(getenv, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return fs.misuse()
	}
	if *cont != "" {
		return demoContinue(ctx, cf, *cont, stdout)
	}
	if err := serverAnswers(ctx, cf.server); err != nil {
		return err
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "The seed's demo on %s: \"continue the task\" from a new process.\n\n", cf.server)

	fmt.Fprintf(stdout, "1. Process 1 (pid %d) states a task, without a session id (POST /v1/chat):\n   > %s\n", os.Getpid(), *taskMsg)
	first, err := c.Chat(ctx, carryon.ChatInput{Message: *taskMsg, RequestID: carryon.NewID("req_")})
	if err != nil {
		return err
	}
	if first.Status != carryon.RunSucceeded {
		return fmt.Errorf("the first run %s %s: %s", first.RunID, first.Status, first.Error)
	}
	fmt.Fprintf(stdout, "   session      %s\n   reply        %s\n", first.SessionID, first.Reply)
	fmt.Fprintf(stdout, "   goal         %s\n   next action  %s\n\n", orDash(first.WorkingMemory.Goal()), orDash(first.WorkingMemory.NextAction()))

	fmt.Fprintf(stdout, "2. A new process that knows only the session id continues:\n   $ carryon demo --continue %s\n", first.SessionID)
	out, err := spawnContinue(ctx, cf, getenv, first.SessionID, stdout, stderr)
	if err != nil {
		return err
	}
	reply := ""
	for _, line := range strings.Split(out, "\n") {
		if r, ok := strings.CutPrefix(strings.TrimSpace(line), "reply "); ok {
			reply = strings.TrimSpace(r)
		}
	}

	wm, err := c.GetWorkingMemory(ctx, first.SessionID)
	if err != nil {
		return err
	}
	goal, next := wm.WorkingMemory.Goal(), wm.WorkingMemory.NextAction()
	fmt.Fprintf(stdout, "\n3. The session's working memory now (version %d):\n   goal         %s\n   next action  %s\n", wm.Version, orDash(goal), orDash(next))
	if goal == "" || next == "" {
		return errors.New("the session has no goal or next action in its working memory: the model did not keep them")
	}
	if !mentions(reply, goal) || !mentions(reply, next) {
		return fmt.Errorf("✗ the second process's reply does not state the goal %q and the next action %q: %q", goal, next, reply)
	}
	fmt.Fprintln(stdout, "\n✓ the second process knew the goal and the next action")
	return nil
}

// demoContinue is the demo's second process: it knows only the session id.
func demoContinue(ctx context.Context, cf clientFlags, id string, stdout io.Writer) error {
	c, err := cf.client()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "   [process 2, pid %d] knows only %s and says: continue the task\n", os.Getpid(), id)
	res, err := c.Chat(ctx, carryon.ChatInput{SessionID: id, Message: "continue the task", RequestID: carryon.NewID("req_")})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "   reply        %s\n", strings.ReplaceAll(res.Reply, "\n", " "))
	if res.Status != carryon.RunSucceeded {
		return fmt.Errorf("run %s %s: %s", res.RunID, res.Status, res.Error)
	}
	return nil
}

// spawnContinue runs `carryon demo --continue ID` as a new process, showing its output, and
// returns that output. The key travels in the environment, not on the command line.
func spawnContinue(ctx context.Context, cf clientFlags, getenv env, id string, stdout, stderr io.Writer) (string, error) {
	bin := getenv("CARRYON_BIN")
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return "", fmt.Errorf("find this program to run it again: %w", err)
		}
	}
	cmd := exec.CommandContext(ctx, bin, "demo", "--continue", id, "--server", cf.server, "--data", cf.data)
	cmd.Env = os.Environ()
	if cf.key != "" {
		cmd.Env = append(cmd.Env, "CARRYON_KEY="+cf.key)
	}
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(stdout, &out)
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("the second process (%s demo --continue %s): %w", bin, id, err)
	}
	return out.String(), nil
}

// serverAnswers checks that a carryon server answers at url, and says how to start one if not.
func serverAnswers(ctx context.Context, url string) error {
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	err := client.New(url, "").Health(cctx)
	if err == nil {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "no carryon server answers at %s (%v).\n", url, err)
	b.WriteString("Start one in another terminal, then run the demo again:\n\n")
	b.WriteString("    carryon serve                  # or, from a clone: go run ./cmd/carryon serve\n")
	if url != "http://"+DefaultAddr {
		b.WriteString("\n(or pass --server with the URL the server prints)")
	}
	return errors.New(strings.TrimRight(b.String(), "\n"))
}

// mentions reports whether text states s, ignoring case and a trailing full stop.
func mentions(text, s string) bool {
	s = strings.TrimRight(strings.TrimSpace(s), ".")
	return s != "" && strings.Contains(strings.ToLower(text), strings.ToLower(s))
}
