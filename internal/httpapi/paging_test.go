package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
)

// waitFinished reads the run's event stream to its end (the server closes it after the run's last
// event) and returns the run.
func waitFinished(t *testing.T, e *env, runID string) carryon.Run {
	t.Helper()
	wantStatus(t, e.json("GET", "/v1/runs/"+runID+"/events", e.aliceKey, ""), http.StatusOK)
	run := decodeBody[carryon.Run](t, e.json("GET", "/v1/runs/"+runID, e.aliceKey, ""))
	if !run.Status.Terminal() {
		t.Fatalf("run %s is %s after its stream ended", runID, run.Status)
	}
	return run
}

// listing is one paged route: how to ask for a page and what identifies an item.
type listing struct {
	name string
	// get asks for a page: query holds limit and cursor (and whatever the route needs).
	get func(query url.Values) *answer
	// id names an item of the answer's items.
	id func(item map[string]any) string
}

// page is an answer of a listing.
type page struct {
	Items      []map[string]any `json:"items"`
	NextCursor string           `json:"next_cursor"`
}

// pageThrough reads every page of l with the given limit and returns the items' ids in order.
func pageThrough(t *testing.T, l listing, limit int) []string {
	t.Helper()
	var ids []string
	q := url.Values{"limit": {fmt.Sprint(limit)}}
	for n := 0; ; n++ {
		if n > 50 {
			t.Fatalf("%s: more than 50 pages", l.name)
		}
		a := l.get(q)
		wantStatus(t, a, http.StatusOK)
		p := decodeBody[page](t, a)
		if len(p.Items) > limit {
			t.Fatalf("%s: a page of %d items, limit %d", l.name, len(p.Items), limit)
		}
		for _, it := range p.Items {
			ids = append(ids, l.id(it))
		}
		if p.NextCursor == "" {
			return ids
		}
		if len(p.Items) == 0 {
			t.Fatalf("%s: an empty page with next_cursor %q", l.name, p.NextCursor)
		}
		q.Set("cursor", p.NextCursor)
	}
}

func str(field string) func(map[string]any) string {
	return func(it map[string]any) string { return fmt.Sprint(it[field]) }
}

// Every listing pages the same way: limit and cursor in, next_cursor out. Paging with any page
// size yields what one big page holds, in the same order, each item once; a cursor that the
// listing did not return is 400.
func TestEveryListingPagesWithLimitAndCursor(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	var sess []string
	for i := range 5 {
		sess = append(sess, e.newSession(fmt.Sprint("s", i)).ID)
	}
	s := sess[0]
	for i := range 4 {
		wantStatus(t, e.json("POST", "/v1/sessions/"+s+"/messages", e.aliceKey, fmt.Sprintf(`{"messages":[{"role":"user","content":"m%d"}]}`, i)), http.StatusCreated)
		wantStatus(t, e.json("PATCH", "/v1/sessions/"+s+"/memory", e.aliceKey, fmt.Sprintf(`{"patch":{"n%d":%d}}`, i, i)), http.StatusOK)
	}
	// A first step of three tool calls: update_working_memory, write_file PLAN.md and notes.txt.
	msg, _ := json.Marshal(map[string]string{"message": "New task: ship the notes\n/tool write_file {\"path\":\"notes.txt\",\"content\":\"n\"}"})
	run := decodeBody[carryon.Run](t, e.json("POST", "/v1/sessions/"+sess[1]+"/runs", e.aliceKey, string(msg)))
	waitFinished(t, e, run.ID)
	for range 2 {
		next := decodeBody[carryon.Run](t, e.json("POST", "/v1/sessions/"+sess[1]+"/runs", e.aliceKey, `{"message":"continue the task"}`))
		waitFinished(t, e, next.ID)
	}
	for i := range 5 {
		wantStatus(t, e.json("PUT", fmt.Sprintf("/v1/memories/tea/k%d", i), e.aliceKey, fmt.Sprintf(`{"value":%d,"text":"green tea number %d"}`, i, i)), http.StatusOK)
	}
	var alice string
	for range 2 {
		a := e.json("POST", "/v1/users/alice/keys", e.adminKey, "")
		wantStatus(t, a, http.StatusCreated)
		alice = decodeBody[struct{ Key carryon.APIKey }](t, a).Key.UserID
	}

	get := func(key, path string) func(url.Values) *answer {
		return func(q url.Values) *answer { return e.json("GET", path+"?"+q.Encode(), key, "") }
	}
	search := func(q url.Values) *answer {
		body := map[string]any{"query": "green tea"}
		if q.Has("limit") {
			var n int
			fmt.Sscan(q.Get("limit"), &n)
			body["limit"] = n
		}
		if q.Has("cursor") {
			body["cursor"] = q.Get("cursor")
		}
		b, _ := json.Marshal(body)
		return e.json("POST", "/v1/memories/search", e.aliceKey, string(b))
	}
	memKey := func(it map[string]any) string { return fmt.Sprint(it["namespace"], "/", it["key"]) }
	listings := []listing{
		{name: "sessions", get: get(e.aliceKey, "/v1/sessions"), id: str("id")},
		{name: "messages", get: get(e.aliceKey, "/v1/sessions/"+s+"/messages"), id: str("seq")},
		{name: "memory history", get: get(e.aliceKey, "/v1/sessions/"+s+"/memory/history"), id: str("memory_version")},
		{name: "runs", get: get(e.aliceKey, "/v1/sessions/"+sess[1]+"/runs"), id: str("id")},
		{name: "actions", get: get(e.aliceKey, "/v1/runs/"+run.ID+"/actions"), id: str("id")},
		{name: "memories", get: get(e.aliceKey, "/v1/memories"), id: memKey},
		{name: "memory search", get: search, id: memKey},
		{name: "users", get: get(e.adminKey, "/v1/users"), id: str("name")},
		{name: "keys", get: get(e.adminKey, "/v1/users/"+alice+"/keys"), id: str("id")},
	}
	for _, l := range listings {
		t.Run(l.name, func(t *testing.T) {
			all := pageThrough(t, l, 100)
			if len(all) < 3 {
				t.Fatalf("%d items, want at least 3 to page through: %v", len(all), all)
			}
			if c := slices.Compact(slices.Sorted(slices.Values(all))); len(c) != len(all) {
				t.Fatalf("an item twice in one page: %v", all)
			}
			for _, limit := range []int{1, 2} {
				if got := pageThrough(t, l, limit); !slices.Equal(got, all) {
					t.Fatalf("paged by %d: %v, want %v", limit, got, all)
				}
			}
			for _, bad := range []string{"nope", "!!", "MTIz", strings.Repeat("x", 300)} {
				a := l.get(url.Values{"cursor": {bad}})
				wantProblem(t, a, http.StatusBadRequest, carryon.EINVALID)
				if !strings.Contains(a.problem.Detail, "cursor") {
					t.Fatalf("cursor %q: detail %q does not name the cursor", bad, a.problem.Detail)
				}
			}
		})
	}
	if a := e.json("GET", "/v1/users?limit=0", e.adminKey, ""); a.status != http.StatusBadRequest {
		t.Fatalf("limit=0: %d", a.status)
	}
}

// The old position parameters stay as aliases of cursor: after_seq for messages, before for the
// working memory history. A cursor and an alias that name different pages are refused.
func TestPagingAliases(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("aliases").ID
	for i := range 3 {
		wantStatus(t, e.json("POST", "/v1/sessions/"+s+"/messages", e.aliceKey, fmt.Sprintf(`{"messages":[{"role":"user","content":"m%d"}]}`, i)), http.StatusCreated)
		wantStatus(t, e.json("PATCH", "/v1/sessions/"+s+"/memory", e.aliceKey, fmt.Sprintf(`{"patch":{"n":%d}}`, i)), http.StatusOK)
	}
	first := decodeBody[page](t, e.json("GET", "/v1/sessions/"+s+"/messages?limit=1", e.aliceKey, ""))
	byCursor := e.json("GET", "/v1/sessions/"+s+"/messages?limit=1&cursor="+url.QueryEscape(first.NextCursor), e.aliceKey, "")
	byAlias := e.json("GET", "/v1/sessions/"+s+"/messages?limit=1&after_seq=1", e.aliceKey, "")
	wantStatus(t, byCursor, http.StatusOK)
	if string(byCursor.body) != string(byAlias.body) || decodeBody[page](t, byCursor).Items[0]["seq"] != 2.0 {
		t.Fatalf("cursor %s, after_seq %s", byCursor.body, byAlias.body)
	}
	wantProblem(t, e.json("GET", "/v1/sessions/"+s+"/messages?cursor="+url.QueryEscape(first.NextCursor)+"&after_seq=2", e.aliceKey, ""), http.StatusBadRequest, carryon.EINVALID)

	hist := decodeBody[page](t, e.json("GET", "/v1/sessions/"+s+"/memory/history?limit=1", e.aliceKey, ""))
	byCursor = e.json("GET", "/v1/sessions/"+s+"/memory/history?limit=1&cursor="+url.QueryEscape(hist.NextCursor), e.aliceKey, "")
	byAlias = e.json("GET", "/v1/sessions/"+s+"/memory/history?limit=1&before=3", e.aliceKey, "")
	wantStatus(t, byCursor, http.StatusOK)
	if string(byCursor.body) != string(byAlias.body) || decodeBody[page](t, byCursor).Items[0]["memory_version"] != 2.0 {
		t.Fatalf("cursor %s, before %s", byCursor.body, byAlias.body)
	}
	wantProblem(t, e.json("GET", "/v1/sessions/"+s+"/memory/history?cursor="+url.QueryEscape(hist.NextCursor)+"&before=1", e.aliceKey, ""), http.StatusBadRequest, carryon.EINVALID)
}

// A session written while a client pages through the session list is not skipped: the list is
// ordered by creation, which a write does not change.
func TestSessionWrittenWhilePagingIsNotSkipped(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	var want []string
	for i := range 5 {
		want = append(want, e.newSession(fmt.Sprint("s", i)).ID)
	}
	l := listing{name: "sessions", id: str("id"), get: func(q url.Values) *answer {
		return e.json("GET", "/v1/sessions?"+q.Encode(), e.aliceKey, "")
	}}
	var seen []string
	q := url.Values{"limit": {"2"}}
	for n := 0; ; n++ {
		p := decodeBody[page](t, l.get(q))
		for _, it := range p.Items {
			seen = append(seen, l.id(it))
		}
		if n == 0 {
			// Meanwhile another tab writes to the oldest session, which is still to come.
			wantStatus(t, e.json("POST", "/v1/sessions/"+want[0]+"/messages", e.aliceKey, hello), http.StatusCreated)
			wantStatus(t, e.json("PATCH", "/v1/sessions/"+want[1], e.aliceKey, `{"title":"renamed"}`), http.StatusOK)
		}
		if p.NextCursor == "" {
			break
		}
		q.Set("cursor", p.NextCursor)
	}
	slices.Sort(seen)
	slices.Sort(want)
	if !slices.Equal(seen, want) {
		t.Fatalf("paged %v, want every session once: %v", seen, want)
	}
}
