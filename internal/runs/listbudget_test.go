package runs_test

import (
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/runs"
)

// A page of a session's runs stops at the read budget (a run holds its message and its reply),
// and its next_cursor goes on from the last run it holds: every run comes once, newest first.
func TestListRunsPastTheReadBudget(t *testing.T) {
	f := newFixture(t, nil)
	f.stop() // the runs stay queued
	s, err := f.sess.Create(f.alice, carryon.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 6 {
		run, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: string(rune('a'+i)) + strings.Repeat("x", 1000), Multitask: "enqueue"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append([]string{run.ID}, ids...) // newest first
	}
	small := runs.New(f.st, f.sess, nil, runs.Config{MaxReadBytes: 3000})
	var got []string
	pages := 0
	for cursor := ""; ; pages++ {
		page, err := small.ListRuns(f.alice, s.ID, carryon.RunFilter{Limit: 100, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) > 2 {
			t.Fatalf("a page of %d runs of 1 KB each, with a budget of 3,000 bytes", len(page.Items))
		}
		for _, r := range page.Items {
			got = append(got, r.ID)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if strings.Join(got, " ") != strings.Join(ids, " ") || pages < 2 {
		t.Fatalf("runs %v in %d pages, want %v", got, pages+1, ids)
	}
}
