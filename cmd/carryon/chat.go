package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/client"
)

const chatUsage = `usage: carryon chat [--session ID [--expected-version N]] [--tools FILE]
  A conversation on stdin: every line is a message; the agent's work streams as it happens.
  Without --session a new session is made; its id is printed first, to continue it later.
  With --expected-version (or on a new session), the first message expects that session version
  and every later one the version the session reached after the previous run, as a server with
  --require-version needs; a message refused for a stale version is not sent and the chat goes on.
  /quit or end of input leaves; Ctrl-C during a run cancels the run.
  --tools FILE declares client tools (a JSON array of {name, description, parameters}) that you
  run yourself: when the model calls one, the chat shows the call and reads its output from the
  next line you type, then the run goes on.

Examples:
  carryon chat
  carryon chat --session sess_...
  carryon chat --session sess_... --expected-version 7 < messages.txt
  carryon chat --tools tools.json`

func runChat(ctx context.Context, args []string, getenv env, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("chat", chatUsage, stdout)
	var cf clientFlags
	cf.register(fs.FlagSet, getenv)
	sessionID := fs.String("session", "", "the session to continue; default a new one")
	toolsFile := fs.String("tools", "", "a JSON file of client tools you answer yourself: [{name, description, parameters}]")
	var vf versionFlag
	vf.register(fs.FlagSet, "of the first message, with --session")
	pos, err := fs.parse(getenv, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return fs.misuse()
	}
	expected, err := vf.get()
	if err != nil {
		return err
	}
	if expected != nil && *sessionID == "" {
		return usagef("--expected-version needs --session: a new session has no version yet")
	}
	tools, err := readClientTools(*toolsFile)
	if err != nil {
		return err
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	id, expected, err := openSession(ctx, c, *sessionID, "chat", expected, stdout)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "Type a message; /quit or end of input leaves; Ctrl-C stops a run.")
	read := lineReader(ctx, stdin, stdout, !isTerminal(stdin)) // show piped input after the prompt, as a terminal would
	for {
		line, open := read("> ")
		if !open && ctx.Err() != nil {
			fmt.Fprintf(stdout, "continue later with: carryon chat --session %s\n", id)
			return nil
		}
		line = strings.TrimSpace(line)
		if !open || line == "/quit" || line == "/exit" {
			if !open {
				fmt.Fprintln(stdout)
			}
			fmt.Fprintf(stdout, "continue later with: carryon chat --session %s\n", id)
			return nil
		}
		if line == "" {
			continue
		}
		run, err := c.Start(ctx, id, carryon.NewRun{Message: line, Tools: tools, WriteOptions: carryon.WriteOptions{RequestID: carryon.NewID("req_"), ExpectedVersion: expected}})
		if e, isAppErr := carryon.AsError(err); isAppErr {
			fmt.Fprintf(stdout, "error: %s\n", e)
			if e.Code == carryon.EVERSION && expected != nil {
				// Someone else wrote to the session: the user has seen it now and may resend.
				expected = carryon.Ptr(e.CurrentVersion)
				fmt.Fprintf(stdout, "the session is at version %d now; send the message again to send it anyway\n", e.CurrentVersion)
			} else if e.Code == carryon.EVERSIONNEEDED {
				fmt.Fprintf(stdout, "start the chat with --expected-version N (`carryon sessions show %s` shows the version)\n", id)
			}
			continue // e.g. the session is busy with a run from elsewhere: the user may retry
		} else if err != nil {
			return err
		}
		st, err := c.Events(ctx, run.ID, 0, true)
		if err != nil && ctx.Err() == nil {
			return err
		}
		end, err := followRun(ctx, c, run.ID, 0, st, stdout) // st is nil when Ctrl-C came first
		if err != nil {
			return err
		}
		if end, err = answerAndFollow(ctx, c, run.ID, end, read, stdout); err != nil {
			return err
		}
		if waits(end) {
			fmt.Fprintf(stdout, "the run waits; answer with: %s; then continue with: carryon chat --session %s\n", answerCommand(run.ID, end), id)
			return nil
		}
		if end.Cancelled {
			fmt.Fprintf(stdout, "continue later with: carryon chat --session %s\n", id)
			return nil
		}
		if expected != nil {
			// The next message follows what this run left: it expects the session's version now.
			wm, err := c.GetWorkingMemory(ctx, id)
			if err != nil {
				return err
			}
			expected = carryon.Ptr(wm.Version)
		}
	}
}

// openSession returns the session to work in: the given one (showing its goal and next action),
// or a new one titled after what it is for. Either way it prints "session: ID" first. expected
// is the version the first write expects: the given one, or the new session's own (no one else
// has written to it yet, and a server with --require-version needs one).
func openSession(ctx context.Context, c *client.Client, id, title string, given *int64, w io.Writer) (_ string, expected *int64, _ error) {
	if id == "" {
		s, err := c.Create(ctx, carryon.NewSession{Title: title})
		if err != nil {
			return "", nil, err
		}
		fmt.Fprintf(w, "session: %s (new)\n", s.ID)
		return s.ID, carryon.Ptr(s.Version), nil
	}
	wm, err := c.GetWorkingMemory(ctx, id)
	if err != nil {
		return "", nil, err
	}
	fmt.Fprintf(w, "session: %s\n", id)
	if g := wm.WorkingMemory.Goal(); g != "" {
		fmt.Fprintf(w, "goal:    %s\nnext:    %s\n", g, orDash(wm.WorkingMemory.NextAction()))
	}
	return id, given, nil
}

// isTerminal reports whether r is a terminal (a character device).
// lineReader returns a function that prompts on stdout and returns the next line of stdin; false
// at the end of input or when ctx ends (Ctrl-C). With echo it repeats the line it read after the
// prompt, as a terminal shows what is typed.
func lineReader(ctx context.Context, stdin io.Reader, stdout io.Writer, echo bool) func(prompt string) (string, bool) {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	return func(prompt string) (string, bool) {
		fmt.Fprint(stdout, prompt)
		select {
		case <-ctx.Done():
			fmt.Fprintln(stdout)
			return "", false
		case line, open := <-lines:
			if open && echo {
				fmt.Fprintln(stdout, line)
			}
			return line, open
		}
	}
}

// isTerminal reports whether r is a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// readClientTools reads the client tools of --tools: a JSON array of {name, description,
// parameters}; none without a file.
func readClientTools(path string) ([]carryon.ClientTool, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("--tools: %v", err)
	}
	var tools []carryon.ClientTool
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&tools); err != nil {
		return nil, usagef("--tools %s: want a JSON array of {name, description, parameters}: %v", path, err)
	}
	return tools, nil
}

// waits reports whether a run that ended its stream waits for an answer carryon can ask for.
func waits(end *runEnd) bool {
	return !end.Cancelled && (end.Status == carryon.RunRequiresAction && end.RequiredAction != nil ||
		end.Status == carryon.RunWaitingApproval && end.Action != nil)
}

// answerAndFollow asks with read for what the run waits for, sends it and follows the run, until
// it no longer waits or the input ends (it then still waits).
func answerAndFollow(ctx context.Context, c *client.Client, runID string, end *runEnd, read func(string) (string, bool), w io.Writer) (*runEnd, error) {
	for waits(end) {
		answered, err := answerRun(ctx, c, runID, end, read)
		if err != nil || !answered {
			return end, err
		}
		st, err := c.Events(ctx, runID, end.Seq, true)
		if err != nil && ctx.Err() == nil {
			return nil, err
		}
		if end, err = followRun(ctx, c, runID, end.Seq, st, w); err != nil {
			return nil, err
		}
	}
	return end, nil
}

// answerRun asks on the chat's input for what a run waits for: each client tool call's output,
// or the decision on an action that needs approval ("y" approves, "n REASON" rejects, a JSON
// object approves with those arguments). It reports false when the input ended first.
func answerRun(ctx context.Context, c *client.Client, runID string, end *runEnd, read func(string) (string, bool)) (bool, error) {
	retry := carryon.RetryOptions{RequestID: carryon.NewID("req_")}
	if end.Status == carryon.RunRequiresAction {
		var outs []carryon.ToolOutput
		for _, call := range end.RequiredAction.ToolCalls {
			out, ok := read(fmt.Sprintf("output of %s [%s]> ", call.Name, call.CallID))
			if !ok {
				return false, nil
			}
			outs = append(outs, carryon.ToolOutput{CallID: call.CallID, Output: out})
		}
		_, err := c.SubmitToolOutputs(ctx, runID, carryon.ToolOutputs{Outputs: outs, RetryOptions: retry})
		return err == nil, err
	}
	a := end.Action
	for {
		line, ok := read(fmt.Sprintf("run %s(%s)? y = approve, n REASON = reject, {JSON} = approve with these arguments> ", a.Tool, formatArgs(a.Args)))
		if !ok {
			return false, nil
		}
		in := carryon.Approval{ActionID: a.ID, RetryOptions: retry}
		line = strings.TrimSpace(line)
		word, rest, _ := strings.Cut(line, " ")
		switch {
		case strings.EqualFold(line, "y") || strings.EqualFold(line, "yes"):
			in.Decision = carryon.DecisionApprove
		case strings.EqualFold(word, "n") || strings.EqualFold(word, "no"):
			in.Decision, in.Reason = carryon.DecisionReject, strings.TrimSpace(rest)
		case strings.HasPrefix(line, "{") && json.Valid([]byte(line)):
			in.Decision, in.Arguments = carryon.DecisionApprove, json.RawMessage(line)
		default:
			continue
		}
		if a.Approval != carryon.ApprovalRequired && in.Decision == carryon.DecisionApprove {
			in.Decision = carryon.DecisionRerun // an action a crash interrupted runs again
		}
		_, err := c.Approve(ctx, runID, in)
		return err == nil, err
	}
}
