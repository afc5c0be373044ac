package storetest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// testSearchPlans checks that every plan of a session search (store.SearchPlan) answers the same
// pages, with the same cursors, over varied data: a word in nearly every message, rare words,
// prefixes (one of more words than a probe expands), several words, titles, letters the index
// folds, deleted (redacted) messages, forks, and another owner's sessions.
func testSearchPlans(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	rng := rand.New(rand.NewPCG(7, 11))
	var own []*carryon.Session
	for i := range 40 {
		s := newSession(ownerA, fmt.Sprintf("sess_plan_%02d", i), at(i))
		s.Title = fmt.Sprintf("session %d", i)
		if i%7 == 0 {
			s.Title = fmt.Sprintf("Sprint review %d", i)
		}
		insertSession(t, st, s)
		var texts []string
		for j := range 1 + rng.IntN(4) {
			text := fmt.Sprintf("common words of turn %d about r%d and zz%02d", j, rng.IntN(30), rng.IntN(70))
			switch rng.IntN(6) {
			case 0:
				text = fmt.Sprintf("prefix prepared r%d zz", rng.IntN(30))
			case 1:
				text = "Café sprint notes"
			}
			texts = append(texts, text)
		}
		appendMessages(t, st, s, texts...)
		if i%5 == 0 {
			deleteMessage(t, st, s, 1)
		}
		own = append(own, s)
	}
	// Forks: one made before its parent deletes a message (it still shows it), one after.
	forkIndexed(t, st, own[3], "sess_plan_fork_a", own[3].LastSeq, own[3].Version)
	deleteMessage(t, st, own[3], own[3].LastSeq)
	forkIndexed(t, st, own[3], "sess_plan_fork_b", own[3].LastSeq, own[3].Version)
	other := newSession(ownerB, "sess_plan_other", at(41))
	insertSession(t, st, other)
	appendMessages(t, st, other, "common words of another owner r1 zz01")

	queries := []string{"common", "words", "comm", "c", "r1", "r", "zz", "zz0", "zz07", "common r2", "words turn 1",
		"prefix", "pre", "prep", "sprint", "spr", "review", "cafe", "café", "caf", "notes", "zebra", "session 1", "another"}
	for _, text := range queries {
		// Pages of 1 and 3 are left to the common word's walk below: every page is five searches,
		// which the race detector makes slow on SQLite (300 s a store with them).
		for _, limit := range []int{0, 2, 5, 25} {
			q := terms(text)
			q.Limit = limit
			var pages []string
			for range 100 {
				page := search(t, st, ownerA, q)
				pages = append(pages, page...)
				if limit == 0 || len(page) < limit {
					break
				}
				last := getSession(t, st, ownerA, page[len(page)-1])
				q.AfterCreated, q.AfterID = last.CreatedAt, last.ID
			}
			all := terms(text)
			all.Plan = store.SearchPlanCollect
			if want := search(t, st, ownerA, all); !reflect.DeepEqual(orNone(pages), want) {
				t.Fatalf("%q paged by %d: %v, want %v", text, limit, pages, want)
			}
		}
	}
	// The common word pages through every session that shows it, 3 at a time, newest first.
	q := terms("common")
	q.Limit = 3
	n := 0
	for {
		page := search(t, st, ownerA, q)
		n += len(page)
		if len(page) < q.Limit {
			break
		}
		last := getSession(t, st, ownerA, page[len(page)-1])
		q.AfterCreated, q.AfterID = last.CreatedAt, last.ID
	}
	all := terms("common")
	if want := len(search(t, st, ownerA, all)); n != want || n < 20 {
		t.Fatalf("pages of 3 through %q hold %d sessions, want %d (and at least 20)", "common", n, want)
	}
}
