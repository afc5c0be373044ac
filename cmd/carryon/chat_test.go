package main

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"
)

// cliRun runs the program with stdin against a server and returns its stdout and error.
func cliRun(ctx context.Context, srv *server, stdin io.Reader, extra map[string]string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	m := map[string]string{"CARRYON_SERVER": srv.url, "CARRYON_DATA": srv.data}
	for k, v := range extra {
		m[k] = v
	}
	err := run(ctx, args, envMap(m), stdin, &stdout, &stderr)
	return stdout.String() + stderr.String(), err
}

var sessionLine = regexp.MustCompile(`session: (sess_[a-z0-9]+)`)

const picnic = "Task: plan a picnic: pick a park, then buy food, then invite friends"

// The chat REPL: a task, then "continue the task"; tool calls and memory changes stream, and
// each reply states the goal and the next action.
func TestChatREPL(t *testing.T) {
	t.Parallel()
	srv := startServer(t, t.TempDir())
	out, err := cliRun(context.Background(), srv, strings.NewReader(picnic+"\ncontinue the task\n"), nil, "chat")
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, out)
	}
	m := sessionLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no session line:\n%s", out)
	}
	for _, want := range []string{
		"→ tool update_working_memory(patch=", "← update_working_memory: succeeded", "→ tool write_file(", "← write_file: succeeded",
		`memory: goal="plan a picnic" next="Pick a park"`, "New task. Goal: plan a picnic.", "Next action: Pick a park.",
		`memory: goal="plan a picnic" next="Buy food"`, "Continuing the task. Goal: plan a picnic.", "Next action: Buy food.",
		"continue later with: carryon chat --session " + m[1],
	} {
		if !strings.Contains(out, want) {
			t.Errorf("chat output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Fatalf("output:\n%s", out)
	}
	// A later chat on the same session starts from where it was.
	out, err = cliRun(context.Background(), srv, strings.NewReader("/quit\n"), nil, "chat", "--session", m[1])
	if err != nil || !strings.Contains(out, "goal:    plan a picnic") || !strings.Contains(out, "next:    Buy food") {
		t.Fatalf("chat --session: %v\n%s", err, out)
	}
}

// `carryon run` streams one run and exits 0; runs ls, runs show and context show what it did.
func TestRunCommandAndJournal(t *testing.T) {
	t.Parallel()
	srv := startServer(t, t.TempDir())
	out, err := cliRun(context.Background(), srv, nil, nil, "run", picnic)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	m := sessionLine.FindStringSubmatch(out)
	runID := regexp.MustCompile(`run: (run_[a-z0-9]+)`).FindStringSubmatch(out)
	if m == nil || runID == nil || !strings.Contains(out, "← write_file: succeeded") || !strings.Contains(out, "Next action: Pick a park.") {
		t.Fatalf("run output:\n%s", out)
	}
	if out, err = cliRun(context.Background(), srv, nil, nil, "run", "--session", m[1], "continue", "the", "task"); err != nil || !strings.Contains(out, "Next action: Buy food.") {
		t.Fatalf("run --session: %v\n%s", err, out)
	}
	if out, err = cliRun(context.Background(), srv, nil, nil, "runs", "ls", "--session", m[1]); err != nil || strings.Count(out, "succeeded") != 2 || !strings.Contains(out, runID[1]) {
		t.Fatalf("runs ls: %v\n%s", err, out)
	}
	out, err = cliRun(context.Background(), srv, nil, nil, "runs", "show", runID[1])
	if err != nil {
		t.Fatalf("runs show: %v\n%s", err, out)
	}
	journal := regexp.MustCompile(`(?m)^\s+1\.0\s+update_working_memory\s+\S+\s+succeeded\s+- → sha256:[0-9a-f]{12}\s+\{`)
	write := regexp.MustCompile(`(?m)^\s+1\.1\s+write_file\s+\S+\s+succeeded\s+(absent|sha256:[0-9a-f]{12}) → sha256:[0-9a-f]{12}\s+`)
	if !strings.Contains(out, "run      "+runID[1]+"  succeeded") || !strings.Contains(out, "journal  2 action(s)") || !journal.MatchString(out) || !write.MatchString(out) {
		t.Fatalf("runs show:\n%s", out)
	}
	out, err = cliRun(context.Background(), srv, nil, nil, "context", m[1])
	if err != nil {
		t.Fatalf("context: %v\n%s", err, out)
	}
	for _, want := range []string{"working_memory", "messages", "--- system ---", "Goal: plan a picnic", "Next action: Buy food", "user:     " + picnic} {
		if !strings.Contains(out, want) {
			t.Fatalf("context lacks %q:\n%s", want, out)
		}
	}
	// A run that cannot start is an error; a bad command line is a usage error.
	if _, err := cliRun(context.Background(), srv, nil, nil, "run", "--session", "sess_nope", "hi"); err == nil {
		t.Fatal("run on a missing session: no error")
	}
	for _, args := range [][]string{{"run"}, {"runs"}, {"runs", "ls"}, {"runs", "show"}, {"context"}, {"chat", "extra"}} {
		if _, err := cliRun(context.Background(), srv, nil, nil, args...); err == nil {
			t.Errorf("carryon %v: no error", args)
		}
	}
}

// Ctrl-C during a run cancels the run on the server and ends the chat cleanly.
func TestChatCtrlCCancelsTheRun(t *testing.T) {
	t.Parallel()
	// Each model call takes 3 s unless cancelled: the run is still going when Ctrl-C comes.
	srv := startServer(t, t.TempDir(), "--scripted-delay", "3s")
	key := localKey(t, srv.data)
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	pr, pw := io.Pipe()
	defer pw.Close()
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := cliRun(ctx, srv, pr, nil, "chat")
		done <- result{out, err}
	}()
	if _, err := io.WriteString(pw, picnic+"\n"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the chat's run to be in its model call", func() bool {
		sessions := must(t, srv.url, key, "GET", "/v1/sessions", nil, 200).json(t)["items"].([]any)
		if len(sessions) != 1 {
			return false
		}
		id := sessions[0].(map[string]any)["id"].(string)
		runs := must(t, srv.url, key, "GET", "/v1/sessions/"+id+"/runs", nil, 200).json(t)["items"].([]any)
		return len(runs) == 1 && runs[0].(map[string]any)["status"] == "running"
	})
	interrupt()
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("chat did not end after Ctrl-C")
	}
	if r.err != nil || !strings.Contains(r.out, "^C cancelling run_") || !strings.Contains(r.out, "run cancelled: cancelled by the user") {
		t.Fatalf("chat after Ctrl-C: %v\n%s", r.err, r.out)
	}
	id := sessionLine.FindStringSubmatch(r.out)[1]
	runs := must(t, srv.url, key, "GET", "/v1/sessions/"+id+"/runs", nil, 200).json(t)["items"].([]any)
	if len(runs) != 1 || runs[0].(map[string]any)["status"] != "cancelled" {
		t.Fatalf("runs after Ctrl-C: %v", runs)
	}
}
