package users_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/users"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// TestForgetLeavesNoWordInTheSearchIndex: forgetting a user whose session holds more messages
// than one step deletes leaves none of their words in the search index's pages (the steps delete
// the documents in bulk, and the forget's last transaction purges the index), while another
// user's words are still found. (Without the purge the forgotten words stay in
// session_search_data until a merge.)
func TestForgetLeavesNoWordInTheSearchIndex(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "carryon.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sess := sessions.New(st, sessions.Config{})
	svc := users.New(st, nil).ForgetWith(sess)
	root, bob, _ := rootAndBob(t, users.New(st, nil))
	asBob := carryon.NewContextWithUser(context.Background(), bob)
	asRoot := carryon.NewContextWithUser(context.Background(), root)
	mine, err := sess.Create(asRoot, carryon.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.AppendMessages(asRoot, mine.ID, carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "the pterodactylus notes"}}}); err != nil {
		t.Fatal(err)
	}
	s, err := sess.Create(asBob, carryon.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	const n = sessions.ForgetBatch + 100
	for i := 0; i < n; i += 50 {
		var msgs []carryon.NewMessage
		for j := i; j < i+50; j++ {
			msgs = append(msgs, carryon.NewMessage{Role: carryon.RoleUser, Content: fmt.Sprintf("quetzalcoatlus sighting %d", j)})
		}
		if _, err := sess.AppendMessages(asBob, s.ID, carryon.AppendInput{Messages: msgs}); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := svc.ForgetUser(asRoot, bob.ID); err != nil || r.Deleted.Messages != n {
		t.Fatalf("the forget: %+v, %v", r, err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT block FROM session_search_data`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var kept bool
	for rows.Next() {
		var block []byte
		if err := rows.Scan(&block); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(block, []byte("coatlus")) || bytes.Contains(block, []byte("sighting")) {
			t.Fatal("a forgotten user's word is still in the search index's pages")
		}
		kept = kept || bytes.Contains(block, []byte("dactylus"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	page, err := sess.List(asRoot, carryon.SessionFilter{Query: "pterodactylus"})
	if !kept || err != nil || len(page.Items) != 1 {
		t.Fatalf("another user's words: in the pages %v, found %+v, %v", kept, page, err)
	}
}
