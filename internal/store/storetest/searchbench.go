package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// SearchVocabulary is how many rare words the messages of BenchSessionSearch draw from, one a
// message: with 1,000,000 messages each word is in about 100 of them.
const SearchVocabulary = 10000

// SearchQueries are the searches BenchSessionSearch times, by name: a rare word (about a
// hundred-thousandth of the messages), a prefix of rare words (ten times as many), a word every
// message holds, the start of it (a word being typed), that word with a rare one (every term in one message), a word in titles only,
// and a word nothing holds.
var SearchQueries = []struct{ Name, Query string }{
	{"rare", "w4242"},
	{"rare_prefix", "w424"},
	{"common", "investigation"},
	{"common_prefix", "investig"},
	{"common_and_rare", "investigation w4242"},
	{"title", "sprint"},
	{"none", "zebra"},
}

// PrefillSearch stores, for the owner usr_search, sessions sessions of perSession messages each,
// a hundred sessions a write transaction (their messages indexed for session search as every
// append is): the messages are a turn of an investigation with one word of SearchVocabulary
// drawn at random (seeded: the same data every run); one session in a hundred has "sprint" in
// its title. It returns the owner.
func PrefillSearch(tb testing.TB, st store.Store, sessions, perSession int) string {
	tb.Helper()
	const owner = "usr_search"
	ctx := tb.Context()
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Now().UTC().Truncate(time.Microsecond).Add(-time.Duration(sessions) * time.Second)
	began := time.Now()
	for done := 0; done < sessions; {
		n := min(100, sessions-done)
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			for i := done; i < done+n; i++ {
				s := newSession(owner, fmt.Sprintf("sess_search_%06d", i), start.Add(time.Duration(i)*time.Second))
				s.CreatedAt, s.UpdatedAt = s.LastActiveAt, s.LastActiveAt
				s.ExpiresAt = s.LastActiveAt.Add(365 * 24 * time.Hour)
				s.Title = fmt.Sprintf("session %d", i)
				if i%100 == 0 {
					s.Title = fmt.Sprintf("sprint review %d", i)
				}
				s.Version, s.LastSeq, s.MessageCount = 1, int64(perSession), int64(perSession)
				if err := tx.InsertSession(ctx, s); err != nil {
					return err
				}
				msgs := make([]*carryon.Message, perSession)
				for j := range msgs {
					content := fmt.Sprintf("turn %d: please continue the investigation of w%d where we stopped", j+1, rng.IntN(SearchVocabulary))
					if j%2 == 1 {
						content = fmt.Sprintf("step %d: checked the log for the investigation, next w%d and the config file", j+1, rng.IntN(SearchVocabulary))
					}
					msgs[j] = &carryon.Message{SessionID: s.ID, Seq: int64(j + 1), Role: carryon.RoleUser, Kind: carryon.KindMessage,
						Content: content, Tokens: len(content) / 4, Version: 1, CreatedAt: s.CreatedAt}
				}
				if err := tx.InsertMessages(ctx, owner, msgs); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatalf("prefill: %v", err)
		}
		done += n
		if done%1000 == 0 {
			tb.Logf("prefill: %d sessions, %d messages, %s", done, done*perSession, time.Since(began).Round(time.Second))
		}
	}
	return owner
}

// BenchSessionSearch times the first page (25, as the API's default) of ListSessions with each
// of SearchQueries for owner, one search an iteration, and reports the p50 and p99 in
// milliseconds and how many sessions the page held.
//
// Each search runs by each plan, side by side: collect (the plan every search had before the
// probe, store.SearchPlanCollect) and auto (the plan ListSessions chooses).
func BenchSessionSearch(b *testing.B, st store.Store, owner string) {
	for _, sq := range SearchQueries {
		for _, plan := range []struct {
			name string
			plan store.SearchPlan
		}{{"collect", store.SearchPlanCollect}, {"auto", store.SearchPlanAuto}} {
			b.Run(sq.Name+"/"+plan.name, func(b *testing.B) { benchSearch(b, st, owner, sq.Query, plan.plan) })
		}
	}
}

// benchSearch times the first page of the search text by plan.
func benchSearch(b *testing.B, st store.Store, owner, text string, plan store.SearchPlan) {
	terms, _ := store.SearchQueryTerms(text)
	q := store.SessionQuery{Now: time.Now().UTC(), Limit: 25, Terms: terms, Plan: plan}
	var times []time.Duration
	found := 0
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		err := st.Read(b.Context(), func(tx store.Tx) error {
			page, err := tx.ListSessions(b.Context(), owner, q)
			found = len(page)
			return err
		})
		times = append(times, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(times)
	b.ReportMetric(ms(times[len(times)/2]), "p50-ms")
	b.ReportMetric(ms(times[len(times)*99/100]), "p99-ms")
	b.ReportMetric(float64(found), "sessions")
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// CheckSearchPlans pages, 25 at a time, through each of SearchQueries for owner (data from
// PrefillSearch) by the plan ListSessions chooses, and fails t unless the pages are those of
// the collecting plan: with the drivers' own thresholds (PrefillSearch's data is large enough
// for the common word to probe), where the suite's small data sets them by hand.
func CheckSearchPlans(t *testing.T, st store.Store, owner string) {
	t.Helper()
	for _, sq := range SearchQueries {
		terms, _ := store.SearchQueryTerms(sq.Query)
		var got, want []string
		for _, plan := range []store.SearchPlan{store.SearchPlanAuto, store.SearchPlanCollect} {
			q := store.SessionQuery{Now: time.Now().UTC(), Limit: 25, Terms: terms, Plan: plan}
			var ids []string
			for {
				var page []*carryon.Session
				read(t, st, func(tx store.Tx) (err error) { page, err = tx.ListSessions(t.Context(), owner, q); return err })
				ids = append(ids, sessionIDs(page)...)
				if len(page) < q.Limit {
					break
				}
				last := page[len(page)-1]
				q.AfterCreated, q.AfterID = last.CreatedAt, last.ID
			}
			if plan == store.SearchPlanAuto {
				got = ids
			} else {
				want = ids
			}
		}
		if !slices.Equal(got, want) || len(want) == 0 && sq.Name == "common" {
			t.Errorf("%s (%q): the chosen plan pages through %v, collecting through %v", sq.Name, sq.Query, got, want)
		}
	}
}
