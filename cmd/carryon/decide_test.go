package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/poll"
)

var runLine = regexp.MustCompile(`run: (run_[a-z0-9]+)`)

// TestRunsDecideFromTheCLI: `carryon run` on a profile whose write_file asks for approval exits
// with the command that decides; `carryon runs approve` with edited arguments lets the run write
// what the user chose, `carryon runs reject --reason` tells the model and writes nothing, a
// decision on a run that no longer waits is refused, and `carryon chat` asks on its input.
func TestRunsDecideFromTheCLI(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(file, []byte("providers:\n  offline: {kind: scripted}\nagents:\n  default:\n    provider: offline\n    approval: {write_file: always}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	srv := startServer(t, data, "--agents", file)
	key := localKey(t, data)
	ctx := context.Background()

	waiting := func() (runID, sid string) {
		t.Helper()
		out, err := cliRun(ctx, srv, nil, nil, "run", picnic)
		m := runLine.FindStringSubmatch(out)
		if err == nil || m == nil || !strings.Contains(err.Error(), "carryon runs approve "+m[1]) || !strings.Contains(out, "write_file(") || !strings.Contains(out, "waits for a decision") {
			t.Fatalf("carryon run: %v\n%s", err, out)
		}
		return m[1], sessionLine.FindStringSubmatch(out)[1]
	}
	runID, sid := waiting()
	cli(t, srv, "runs", "approve", runID, "--arguments", `{"path":"plan.md","content":"# Mine\n"}`)
	if run := waitRun(t, srv, key, runID); run["status"] != "succeeded" {
		t.Fatalf("after runs approve: %v", run)
	}
	if b, err := os.ReadFile(filepath.Join(data, "workspaces", sid, "plan.md")); err != nil || string(b) != "# Mine\n" {
		t.Fatalf("plan.md = %q, %v; want the edited content", b, err)
	}
	if out, err := cliRun(ctx, srv, nil, nil, "runs", "approve", runID); err == nil || !strings.Contains(err.Error(), "not waiting for a decision") {
		t.Fatalf("approve of a finished run: %v\n%s", err, out)
	}

	runID, _ = waiting()
	cli(t, srv, "runs", "reject", runID, "--reason", "no files today")
	if run := waitRun(t, srv, key, runID); run["status"] != "succeeded" {
		t.Fatalf("after runs reject: %v", run)
	}
	journal := cli(t, srv, "runs", "show", runID, "--json")
	if !strings.Contains(journal, `"approval": "rejected"`) || !strings.Contains(journal, "rejected by the user: no files today") {
		t.Fatalf("journal after the rejection:\n%s", journal)
	}

	out, err := cliRun(ctx, srv, strings.NewReader(picnic+"\nmaybe\ny\n/quit\n"), nil, "chat")
	if err != nil || strings.Count(out, "y = approve") != 2 || !strings.Contains(out, "← write_file: succeeded") {
		t.Fatalf("chat: %v\n%s", err, out)
	}
	out, err = cliRun(ctx, srv, strings.NewReader(picnic+"\n"), nil, "chat")
	if err != nil || !strings.Contains(out, "answer with: carryon runs approve run_") {
		t.Fatalf("chat whose input ends at the question: %v\n%s", err, out)
	}
}

// TestRunsOutputsFromTheCLI: a run waiting for one client tool's output takes it from
// `carryon runs outputs RUN --output TEXT`; `carryon run` said so.
func TestRunsOutputsFromTheCLI(t *testing.T) {
	t.Parallel()
	m := newWeatherModel(t)
	env := []string{"OPENAI_BASE_URL=" + m.URL + "/v1", "OPENAI_API_KEY=sk-test"}
	data := t.TempDir()
	srv := startServerEnv(t, data, env, "--provider", "openai", "--model", "gpt-test")
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	tools := []any{map[string]any{"name": "get_weather", "description": "The weather in a city.",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}
	runID := must(t, srv.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "Weather in Paris?", "tools": tools}, 202).json(t)["id"].(string)
	if run := waitRun(t, srv, key, runID); run["status"] != "requires_action" {
		t.Fatalf("run = %v", run)
	}
	if out, err := cliRun(context.Background(), srv, nil, nil, "runs", "outputs", runID, "--output", "call_x=?", "--output", "call_y=?"); err == nil {
		t.Fatalf("outputs for calls the run does not wait for: %s", out)
	}
	cli(t, srv, "runs", "outputs", runID, "--output", "sunny, 21 °C")
	if run := waitRun(t, srv, key, runID); run["status"] != "succeeded" || run["reply"] != "The weather: sunny, 21 °C" {
		t.Fatalf("run = %v", run)
	}
}

// TestRunAsksOnATerminal: `carryon run` on a terminal (a pseudo-terminal from Python's pty
// module) asks for the decision a run stops on, as carryon chat does, and the run goes on.
func TestRunAsksOnATerminal(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 for a pseudo-terminal")
	}
	file := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(file, []byte("providers:\n  offline: {kind: scripted}\nagents:\n  default:\n    provider: offline\n    approval: {write_file: always}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	srv := startServer(t, data, "--agents", file)
	cmd := exec.Command(py, "-c", "import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)", binary, "run", picnic)
	cmd.Env = append(os.Environ(), "CARRYON_SERVER="+srv.url, "CARRYON_DATA="+data, "CARRYON_KEY=")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	poll.Eventually(t, "the question on the terminal", func() bool { return strings.Contains(out.String(), "y = approve") })
	if _, err := io.WriteString(in, "y\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("carryon run did not end after the answer:\n%s", out.String())
	}
	if err != nil || !strings.Contains(out.String(), "← write_file: succeeded") {
		t.Fatalf("carryon run on a terminal: %v\n%s", err, out.String())
	}
}
