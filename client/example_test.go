package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/client"
	"github.com/carryon-hub/carryon/hub"
	"github.com/carryon-hub/carryon/internal/httpapi"
)

// serverURL and apiKey are what a program gets from its configuration: the address of a
// carryon server ("carryon serve" listens on http://127.0.0.1:7070) and a user's API key. Here
// TestMain sets them to a server of its own, on a temporary SQLite file.
var serverURL, apiKey string

// Example continues a task over HTTP: find the session by the program's own id (creating it the
// first time), append a turn with a change to its working memory, then run the agent on it and
// wait for the run's end.
func Example() {
	ctx := context.Background()
	c := client.New(serverURL, apiKey)

	page, err := c.List(ctx, carryon.SessionFilter{ExternalID: "my-app/task-7"})
	if err != nil {
		log.Fatal(err)
	}
	var id string
	if len(page.Items) > 0 {
		id = page.Items[0].ID
	} else {
		s, err := c.Create(ctx, carryon.NewSession{
			Title: "task 7", ExternalID: "my-app/task-7",
			WorkingMemory: carryon.WorkingMemory{"goal": "write the report", "next_action": "outline"},
		})
		if err != nil {
			log.Fatal(err)
		}
		id = s.ID
	}
	view, err := c.Get(ctx, id, carryon.GetOptions{})
	if err != nil {
		log.Fatal(err)
	}
	// The request id makes the append safe to retry; the expected version refuses it if someone
	// else wrote to the session since it was read.
	res, err := c.AppendMessages(ctx, id, carryon.AppendInput{
		Messages:           []carryon.NewMessage{{Role: carryon.RoleUser, Content: "Outline done: intro, method, results."}},
		WorkingMemoryPatch: []byte(`{"next_action":"draft the intro"}`),
		WriteOptions:       carryon.WriteOptions{ExpectedVersion: carryon.Ptr(view.Version), RequestID: "task-7-turn-1"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("version:", res.Version)

	run, events, err := c.StartStream(ctx, id, carryon.NewRun{Message: "What is next?"})
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
	done, err := c.GetRun(ctx, run)
	if err != nil {
		log.Fatal(err)
	}
	mem, err := c.GetWorkingMemory(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("next:", mem.WorkingMemory.NextAction())
	fmt.Println("run:", done.Status)
	// Output:
	// version: 2
	// next: draft the intro
	// run: succeeded
}

// TestMain serves carryon in-process, on a temporary SQLite file, for Example.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "carryon-client-example")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	h, err := hub.Open(ctx, hub.Options{Data: dir})
	if err != nil {
		log.Fatal(err)
	}
	_, key, err := h.Users.CreateUser(carryon.NewTrustedContext(ctx), carryon.NewUser{Name: "alice"})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.NewServer(httpapi.Config{Sessions: h.Sessions, Users: h.Users, Runs: h.Runs}))
	serverURL, apiKey = srv.URL, key
	code := m.Run()
	srv.Close()
	h.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}
