package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/hub"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// Example opens carryon on a SQLite file of the program's choosing, with NORMAL synchronous
// (a commit survives a crash of the process, not a power loss), and shows that what it wrote is
// there when the file is opened again.
func Example() {
	dir, err := os.MkdirTemp("", "carryon-sqlite-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	path := filepath.Join(dir, "agent-state.db")

	db, err := sqlite.Open(ctx, path, sqlite.WithSynchronous("normal"))
	if err != nil {
		log.Fatal(err)
	}
	h, err := hub.Open(ctx, hub.Options{Store: db, Data: dir}) // the hub closes db when it closes
	if err != nil {
		log.Fatal(err)
	}
	alice, _, err := h.Users.CreateUser(carryon.NewTrustedContext(ctx), carryon.NewUser{Name: "alice"})
	if err != nil {
		log.Fatal(err)
	}
	s, err := h.Sessions.Create(carryon.NewContextWithUser(ctx, alice), carryon.NewSession{Title: "kept in agent-state.db"})
	if err != nil {
		log.Fatal(err)
	}
	h.Close()

	// Later, another process: the same file, the same session.
	db, err = sqlite.Open(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	h, err = hub.Open(ctx, hub.Options{Store: db, Data: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	got, err := h.Sessions.Get(carryon.NewContextWithUser(ctx, alice), s.ID, carryon.GetOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Title)
	// Output: kept in agent-state.db
}
