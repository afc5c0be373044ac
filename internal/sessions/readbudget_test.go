package sessions_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/sessions"
)

// A page of messages stops at the read budget, before the message that would go past it, and
// its next_cursor goes on from there: paging forwards and backwards reads every message once, in
// order, through a fork and its parent; a message larger than the budget comes alone; a
// session's window keeps the newest messages that fit and says it was cut.
func TestReadBudget(t *testing.T) {
	f := newFixture(t)
	const budget = 10 << 10
	f.svc = sessions.New(f.st, sessions.Config{Now: f.clock.Now, MaxReadBytes: budget})
	s := f.create(t, f.alice)
	text := func(i, n int) string { return fmt.Sprintf("m%02d %s", i, strings.Repeat("x", n)) }
	for i := 1; i <= 6; i++ {
		f.append(t, f.alice, s.ID, text(i, 3000))
	}
	f.append(t, f.alice, s.ID, text(7, 2*budget)) // larger than the whole budget
	fork, err := f.svc.Fork(f.alice, s.ID, carryon.ForkInput{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 8; i <= 12; i++ {
		f.append(t, f.alice, fork.ID, text(i, 3000))
	}

	var got []string
	pages := 0
	for cursor := ""; ; pages++ {
		page, err := f.svc.ListMessages(f.alice, fork.ID, carryon.MessageFilter{Limit: 100, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		size := 0
		for _, m := range page.Items {
			got, size = append(got, m.Content[:3]), size+len(m.Content)
		}
		if len(page.Items) > 1 && size > budget {
			t.Fatalf("a page of %d messages holds %d bytes, over the budget of %d", len(page.Items), size, budget)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	want := []string{"m01", "m02", "m03", "m04", "m05", "m06", "m07", "m08", "m09", "m10", "m11", "m12"}
	if strings.Join(got, " ") != strings.Join(want, " ") || pages < 4 {
		t.Fatalf("forwards in %d pages: %v, want %v in several pages", pages+1, got, want)
	}

	got = nil
	for before := int64(13); ; {
		page, err := f.svc.ListMessages(f.alice, fork.ID, carryon.MessageFilter{Limit: 100, BeforeSeq: before})
		if err != nil {
			t.Fatal(err)
		}
		var chunk []string
		for _, m := range page.Items {
			chunk = append(chunk, m.Content[:3])
		}
		got = append(chunk, got...)
		if page.NextCursor == "" {
			break
		}
		fmt.Sscan(page.NextCursor, &before)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("backwards: %v, want %v", got, want)
	}

	view, err := f.svc.Get(f.alice, fork.ID, carryon.GetOptions{Messages: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !view.MessagesTruncated || len(view.Messages) != 3 || view.Messages[2].Content[:3] != "m12" {
		t.Fatalf("window: truncated %v, %d messages", view.MessagesTruncated, len(view.Messages))
	}
	if view, err = f.svc.Get(f.alice, fork.ID, carryon.GetOptions{Messages: 2}); err != nil || view.MessagesTruncated || len(view.Messages) != 2 {
		t.Fatalf("a window within the budget: %v, truncated %v", err, view.MessagesTruncated)
	}
}

// A page of working memory revisions stops at the read budget, counting each revision's whole
// document (a small patch of a large document is a large revision), and pages on from there.
func TestRevisionsPastTheReadBudget(t *testing.T) {
	f := newFixture(t)
	const budget = 10 << 10
	f.svc = sessions.New(f.st, sessions.Config{Now: f.clock.Now, MaxReadBytes: budget})
	s := f.create(t, f.alice)
	big := fmt.Sprintf(`{"notes":%q}`, strings.Repeat("n", 4000))
	if _, err := f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: []byte(big)}); err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 8; i++ { // small patches: every document stays 4 KB
		if _, err := f.svc.PatchWorkingMemory(f.alice, s.ID, carryon.WorkingMemoryPatch{Patch: fmt.Appendf(nil, `{"step":%d}`, i)}); err != nil {
			t.Fatal(err)
		}
	}
	var got []int64
	pages := 0
	for cursor := ""; ; pages++ {
		page, err := f.svc.WorkingMemoryHistory(f.alice, s.ID, carryon.RevisionFilter{Limit: 100, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) > 2 {
			t.Fatalf("a page of %d revisions of 4 KB documents, with a budget of %d bytes", len(page.Items), budget)
		}
		for _, r := range page.Items {
			got = append(got, r.WorkingMemoryVersion)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if fmt.Sprint(got) != "[8 7 6 5 4 3 2 1]" || pages < 3 {
		t.Fatalf("revisions %v in %d pages", got, pages+1)
	}
}
