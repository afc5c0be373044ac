package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// A batch of group commit holds its members' search documents back to its end (one FTS5 segment
// a batch): a member that deletes a held-back message's document, or searches, gets the earlier
// members' documents inserted first; a member that fails after that drops its own documents and
// leaves the earlier members' held back, so after the commit the index holds exactly the
// messages the members that succeeded stored and did not delete.
func TestGroupCommitHoldsSearchDocuments(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s1, s2 := memoSession("sess_one"), memoSession("sess_two")
	err = db.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertUser(ctx, user("a")); err != nil {
			return err
		}
		for _, s := range []*carryon.Session{s1, s2} {
			if err := tx.InsertSession(ctx, s); err != nil {
				return err
			}
		}
		return tx.InsertMessages(ctx, "usr_a", []*carryon.Message{memoMessage(s1, 1, "alpha one"), memoMessage(s1, 2, "alpha two")})
	})
	if err != nil {
		t.Fatal(err)
	}
	add := func(s *carryon.Session, seq int64, text string) func(context.Context, store.Tx) error {
		return func(ctx context.Context, tx store.Tx) error {
			return tx.InsertMessages(ctx, "usr_a", []*carryon.Message{memoMessage(s, seq, text)})
		}
	}
	boom := errors.New("boom")
	release := holdLead(ctx, db, add(s1, 3, "foxtrot lead")) // the next batch queues behind it
	members := []func(context.Context, store.Tx) error{
		add(s1, 4, "bravo"),
		func(ctx context.Context, tx store.Tx) error { // deletes the message before, held back
			cur, err := tx.GetSession(ctx, "usr_a", s1.ID)
			if err != nil {
				return err
			}
			return tx.DeleteMessage(ctx, "usr_a", cur, 4, cur.Version+1, cur.CreatedAt)
		},
		add(s2, 1, "charlie"),
		func(ctx context.Context, tx store.Tx) error { // stores, searches (flushing), then fails
			if err := add(s2, 2, "delta")(ctx, tx); err != nil {
				return err
			}
			found, err := tx.ListSessions(ctx, "usr_a", store.SessionQuery{Terms: []string{"charlie"}, Limit: 10})
			if err != nil || len(found) != 1 {
				return errors.Join(err, errors.New("a member does not find the documents of the members before it"))
			}
			return boom
		},
		add(s1, 5, "echo"),
	}
	errs := make([]chan error, len(members))
	for i, fn := range members {
		errs[i] = make(chan error, 1)
		go func() { errs[i] <- db.Write(ctx, fn) }()
		waitPending(t, db, i+1)
	}
	if err := release(); err != nil {
		t.Fatalf("lead: %v", err)
	}
	for i := range members {
		if err := <-errs[i]; (i == 3) != errors.Is(err, boom) || (i != 3 && err != nil) {
			t.Errorf("member %d: %v", i, err)
		}
	}
	for word, want := range map[string][]string{"alpha": {s1.ID}, "foxtrot": {s1.ID}, "bravo": nil, "charlie": {s2.ID}, "delta": nil, "echo": {s1.ID}} {
		var got []string
		err := db.Read(ctx, func(tx store.Tx) error {
			page, err := tx.ListSessions(ctx, "usr_a", store.SessionQuery{Terms: []string{word}, Limit: 10})
			for _, s := range page {
				got = append(got, s.ID)
			}
			return err
		})
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("sessions found by %q: %v (%v), want %v", word, got, err, want)
		}
	}
}
