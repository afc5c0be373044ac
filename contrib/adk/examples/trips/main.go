// Command trips is an ADK Go agent whose sessions live in carryon, with no model at all (its
// agent answers from the session's state), so it runs offline: `trips plan DIR` states a task,
// and `trips continue DIR`, a new process that knows only the session's ids, carries on from the
// goal and next action the first one stored. DIR is carryon's data directory (an embedded hub).
package main

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/carryon-hub/carryon"
	carryonadk "github.com/carryon-hub/carryon/contrib/adk"
	"github.com/carryon-hub/carryon/hub"
)

func main() {
	if len(os.Args) != 3 || os.Args[1] != "plan" && os.Args[1] != "continue" {
		fmt.Fprintln(os.Stderr, "usage: trips plan|continue DATA_DIR")
		os.Exit(2)
	}
	out, err := run(context.Background(), os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "trips:", err)
		os.Exit(1)
	}
	fmt.Println(out)
}

func run(ctx context.Context, step, data string) (string, error) {
	h, err := hub.Open(ctx, hub.Options{Data: data, NoWorkers: true})
	if err != nil {
		return "", err
	}
	defer h.Close()
	// The adapter acts for one carryon user: the application's account.
	trusted := carryon.NewTrustedContext(ctx)
	user, err := h.Users.GetUser(trusted, "trips-app")
	if carryon.ErrorCode(err) == carryon.ENOTFOUND {
		user, _, err = h.Users.CreateUser(trusted, carryon.NewUser{Name: "trips-app"})
	}
	if err != nil {
		return "", err
	}
	svc := carryonadk.NewInProcess(h, user, carryonadk.Options{})

	msg, answer := "Plan a trip to Lisbon.", func(agent.InvocationContext) (string, map[string]any) {
		return "planned: Lisbon", map[string]any{"goal": "plan a trip to Lisbon", "next_action": "book flights"}
	}
	if step == "plan" {
		_, err := svc.Create(ctx, &session.CreateRequest{AppName: "trips", UserID: "u1", SessionID: "trip-1"})
		if err != nil {
			return "", err
		}
	} else {
		msg, answer = "Go on.", func(ic agent.InvocationContext) (string, map[string]any) {
			goal, _ := ic.Session().State().Get("goal")
			next, _ := ic.Session().State().Get("next_action")
			return fmt.Sprintf("continuing %q: %v, then book a hotel", goal, next), map[string]any{"next_action": "book a hotel"}
		}
	}
	ag, err := agent.New(agent.Config{Name: "planner", Description: "answers from the session's state",
		Run: func(ic agent.InvocationContext) iter.Seq2[*session.Event, error] {
			return func(yield func(*session.Event, error) bool) {
				text, delta := answer(ic)
				ev := session.NewEvent(ic, ic.InvocationID())
				ev.Author = "planner"
				ev.Content = genai.NewContentFromText(text, genai.RoleModel)
				ev.Actions.StateDelta = delta
				yield(ev, nil)
			}
		}})
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
	if last == "" {
		return "", errors.New("the agent said nothing")
	}
	return last, nil
}
