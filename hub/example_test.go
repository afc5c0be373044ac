package hub_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/hub"
)

// Example is the program of docs/LIBRARY.md: open carryon in-process, create a user, a session
// with a goal, append to it, continue it as another part of the program would (from its id
// alone), and run the agent on it.
func Example() {
	dir, err := os.MkdirTemp("", "carryon-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	h, err := hub.Open(ctx, hub.Options{Data: dir}) // the SQLite file dir/carryon.db, the default agent
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	// Users are made by an admin; a trusted context is the embedding program itself.
	alice, _, err := h.Users.CreateUser(carryon.NewTrustedContext(ctx), carryon.NewUser{Name: "alice"})
	if err != nil {
		log.Fatal(err)
	}
	// Every other call acts for the user in its context, as a request with her key would.
	as := carryon.NewContextWithUser(ctx, alice)

	sess, err := h.Sessions.Create(as, carryon.NewSession{
		Title:         "picnic",
		ExternalID:    "my-app/picnic-1", // the program's own id: a repeat finds this session
		WorkingMemory: carryon.WorkingMemory{"goal": "plan a picnic", "next_action": "pick a park"},
	})
	if err != nil {
		log.Fatal(err)
	}
	_, err = h.Sessions.AppendMessages(as, sess.ID, carryon.AppendInput{
		Messages:           []carryon.NewMessage{{Role: carryon.RoleUser, Content: "Hyde Park, Saturday."}},
		WorkingMemoryPatch: []byte(`{"next_action":"buy food"}`), // one write with the message
		WriteOptions:       carryon.WriteOptions{ExpectedVersion: carryon.Ptr(sess.Version), RequestID: "turn-1"},
	})
	if err != nil {
		log.Fatal(err)
	}

	// Continue: find the session by the program's id, read the goal, next action and last messages.
	page, err := h.Sessions.List(as, carryon.SessionFilter{ExternalID: "my-app/picnic-1"})
	if err != nil || len(page.Items) != 1 {
		log.Fatal("the session is not found by its external id: ", err)
	}
	view, err := h.Sessions.Get(as, page.Items[0].ID, carryon.GetOptions{Messages: 5})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("goal:", view.WorkingMemory.Goal())
	fmt.Println("next:", view.WorkingMemory.NextAction())
	fmt.Println("last:", view.Messages[len(view.Messages)-1].Content)

	// Run the agent: this process's runners execute it; the events end with the run's last.
	run, err := h.Runs.Start(as, sess.ID, carryon.NewRun{Message: "What is next?"})
	if err != nil {
		log.Fatal(err)
	}
	events, err := h.Runs.Events(as, run.ID, 0, true)
	if err != nil {
		log.Fatal(err)
	}
	defer events.Close()
	for {
		_, ok, err := events.Next()
		if err != nil {
			log.Fatal(err)
		}
		if !ok {
			break
		}
	}
	done, err := h.Runs.GetRun(as, run.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("run:", done.Status, "through", done.Door)
	// Output:
	// goal: plan a picnic
	// next: buy food
	// last: Hyde Park, Saturday.
	// run: succeeded through library
}
