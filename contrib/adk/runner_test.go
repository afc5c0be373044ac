package carryonadk_test

import (
	"context"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"strings"
	"testing"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/client"
	"github.com/carryon-hub/carryon/contrib/adk"
	"github.com/carryon-hub/carryon/hub"
)

// TestMain runs a child process of TestRunnerAcrossProcesses when asked to.
func TestMain(m *testing.M) {
	if step := os.Getenv("CARRYONADK_CHILD"); step != "" {
		out, err := child(step)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Print(out)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRunnerAcrossProcesses: one process runs an ADK agent (runner.Runner) that plans a task
// and records its goal and next action as state; it exits. A second process, with nothing but
// the session's ids, continues the session through its own runner: its agent knows the goal and
// the next action and sees the first process's events. In-process (each child opens the data
// directory in turn) and over HTTP (both children talk to one server).
func TestRunnerAcrossProcesses(t *testing.T) {
	t.Parallel()
	for _, m := range []string{"in-process", "http"} {
		t.Run(m, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			th := newHub(t, dir)
			env := []string{"CARRYONADK_MODE=" + m, "CARRYONADK_DATA=" + dir, "CARRYONADK_URL=" + th.url, "CARRYONADK_KEY=" + th.aliceKey}
			if m == "in-process" {
				th.hub.Close() // one process at a time on a SQLite file
			}
			first := run(t, env, "plan")
			if first != "planned: Lisbon" {
				t.Fatalf("the first process answered %q", first)
			}
			second := run(t, env, "continue")
			if want := "goal=plan a trip to Lisbon next=book flights events=2"; second != want {
				t.Fatalf("the second process answered %q, want %q", second, want)
			}
			if m == "in-process" {
				th = newHub(t, dir)
			}
			s := carryonadk.NewInProcess(th.hub, th.alice, carryonadk.Options{})
			got := get(t, s, "u1", "trip-1")
			if got.Events().Len() != 4 {
				t.Fatalf("%d events after two runs; want 4 (two user messages, two replies)", got.Events().Len())
			}
			if v, _ := got.State().Get("next_action"); v != "book hotel" {
				t.Fatalf("next_action = %v after the second run; want book hotel", v)
			}
			view, err := th.hub.Sessions.Get(carryon.NewContextWithUser(t.Context(), th.alice), carryonadk.CarryonID(got), carryon.GetOptions{})
			if err != nil || view.WorkingMemory.Goal() != "plan a trip to Lisbon" || view.WorkingMemory.NextAction() != "book hotel" {
				t.Fatalf("carryon's working memory = %+v, %v", view.WorkingMemory, err)
			}
		})
	}
}

// run starts the test binary as a child process for step and returns what it printed.
func run(t *testing.T, env []string, step string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), env...), "CARRYONADK_CHILD="+step)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child %s: %v\n%s", step, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// child is one process of TestRunnerAcrossProcesses: it opens the adapter as CARRYONADK_MODE
// says, runs step's agent once and returns its final text.
func child(step string) (string, error) {
	ctx := context.Background()
	var svc *carryonadk.Service
	switch os.Getenv("CARRYONADK_MODE") {
	case "http":
		svc = carryonadk.NewHTTP(client.New(os.Getenv("CARRYONADK_URL"), os.Getenv("CARRYONADK_KEY")), carryonadk.Options{})
	default:
		h, err := hub.Open(ctx, hub.Options{Data: os.Getenv("CARRYONADK_DATA"), NoWorkers: true})
		if err != nil {
			return "", err
		}
		defer h.Close()
		alice, err := h.Users.GetUser(carryon.NewTrustedContext(ctx), "alice")
		if err != nil {
			return "", err
		}
		svc = carryonadk.NewInProcess(h, alice, carryonadk.Options{})
	}
	var ag agent.Agent
	var err error
	msg := "Plan a trip to Lisbon."
	switch step {
	case "plan":
		if _, err := svc.Create(ctx, &session.CreateRequest{AppName: "trips", UserID: "u1", SessionID: "trip-1"}); err != nil {
			return "", err
		}
		ag, err = reply("planner", func(agent.InvocationContext) (string, map[string]any) {
			return "planned: Lisbon", map[string]any{"goal": "plan a trip to Lisbon", "next_action": "book flights"}
		})
	case "continue":
		msg = "Go on."
		ag, err = reply("planner", func(ic agent.InvocationContext) (string, map[string]any) {
			goal, _ := ic.Session().State().Get("goal")
			next, _ := ic.Session().State().Get("next_action")
			return fmt.Sprintf("goal=%v next=%v events=%d", goal, next, ic.Session().Events().Len()-1), map[string]any{"next_action": "book hotel"}
		})
	default:
		return "", fmt.Errorf("unknown step %q", step)
	}
	if err != nil {
		return "", err
	}
	r, err := runner.New(runner.Config{AppName: "trips", Agent: ag, SessionService: svc, MemoryService: svc})
	if err != nil {
		return "", err
	}
	var last string
	for ev, err := range r.Run(ctx, "u1", "trip-1", genai.NewContentFromText(msg, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			return "", err
		}
		if ev.Author == "planner" && ev.Content != nil && len(ev.Content.Parts) > 0 {
			last = ev.Content.Parts[0].Text
		}
	}
	return last, nil
}

// reply is an agent that answers each invocation with one event: the text and state delta of fn.
func reply(name string, fn func(agent.InvocationContext) (string, map[string]any)) (agent.Agent, error) {
	return agent.New(agent.Config{Name: name, Description: "answers from the session's state",
		Run: func(ic agent.InvocationContext) iter.Seq2[*session.Event, error] {
			return func(yield func(*session.Event, error) bool) {
				text, delta := fn(ic)
				ev := session.NewEvent(ic, ic.InvocationID())
				ev.Author = name
				ev.Content = genai.NewContentFromText(text, genai.RoleModel)
				ev.Actions.StateDelta = delta
				yield(ev, nil)
			}
		}})
}
