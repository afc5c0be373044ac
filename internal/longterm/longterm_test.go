package longterm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/longterm"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/store/postgres"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// drivers returns the stores the tests run on: SQLite always, PostgreSQL when
// CARRYON_TEST_POSTGRES_URL names a server (a fresh database, dropped at the end), each holding
// the users the tests act for (long-term memory is only made for a user who exists).
func drivers(t *testing.T) map[string]store.Store {
	out := stores(t)
	for _, st := range out {
		for _, id := range []string{"usr_alice", "usr_bob"} {
			if err := st.Write(t.Context(), func(_ context.Context, tx store.Tx) error {
				return tx.InsertUser(t.Context(), &carryon.User{ID: id, Name: id, CreatedAt: time.Unix(1, 0).UTC()})
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

func stores(t *testing.T) map[string]store.Store {
	out := map[string]store.Store{}
	db, err := sqlite.Open(t.Context(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	out["sqlite"] = db
	if !pgtest.Enabled() {
		return out
	}
	pg, err := postgres.Open(t.Context(), pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	out["postgres"] = pg
	return out
}

// clock is a fake clock safe for concurrent use.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func as(id string) context.Context {
	return carryon.NewContextWithUser(context.Background(), &carryon.User{ID: id})
}

func keysOf(items []*carryon.LongTermItem) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.Namespace+"/"+it.Key)
	}
	return out
}

// corpus is testdata/corpus.json: items and the results queries must rank first.
type corpus struct {
	Items []struct {
		Namespace string          `json:"namespace"`
		Key       string          `json:"key"`
		Value     json.RawMessage `json:"value"`
		Text      string          `json:"text"`
	} `json:"items"`
	Queries []struct {
		Query     string   `json:"query"`
		Namespace string   `json:"namespace"`
		Top       []string `json:"top"`
		Count     *int     `json:"count"`
	} `json:"queries"`
}

// Search ranks the relevant items of the fixed corpus first, on every driver, and another user
// holding the same corpus changes nothing about what is found.
func TestSearchRanksCorpus(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var c corpus
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	for name, st := range drivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clk := &clock{t: time.Date(2025, 5, 1, 9, 0, 0, 0, time.UTC)}
			svc := longterm.New(st, clk.now)
			for _, owner := range []string{"usr_alice", "usr_bob"} {
				for _, it := range c.Items {
					clk.add(time.Second)
					if _, err := svc.Put(as(owner), it.Namespace, it.Key, carryon.LongTermPut{Value: it.Value, Text: it.Text}); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, q := range c.Queries {
				res, err := svc.Search(as("usr_alice"), carryon.LongTermSearch{Query: q.Query, Namespace: q.Namespace})
				if err != nil {
					t.Fatalf("search %q: %v", q.Query, err)
				}
				got := keysOf(res.Items)
				if len(got) < len(q.Top) || !slices.Equal(got[:len(q.Top)], q.Top) {
					t.Errorf("search %q in %q = %v, want %v first", q.Query, q.Namespace, got, q.Top)
				}
				if q.Count != nil && len(got) != *q.Count {
					t.Errorf("search %q = %v, want %d results", q.Query, got, *q.Count)
				}
				for i, it := range res.Items {
					if it.OwnerID != "usr_alice" || it.Score <= 0 || it.Score > 1 || i > 0 && it.Score > res.Items[i-1].Score {
						t.Errorf("search %q: result %d = %+v", q.Query, i, it)
					}
				}
				if len(res.Items) > 0 && res.Items[0].Score != 1 {
					t.Errorf("search %q: the best score is %v, want 1", q.Query, res.Items[0].Score)
				}
			}
		})
	}
}

// Put, Get, List, Delete and Search validate their input and serve only the caller.
func TestServiceRules(t *testing.T) {
	t.Parallel()
	for name, st := range drivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clk := &clock{t: time.Date(2025, 5, 1, 9, 0, 0, 0, time.UTC)}
			svc := longterm.New(st, clk.now)
			alice, bob := as("usr_alice"), as("usr_bob")
			if _, err := svc.Put(context.Background(), "prefs", "k", carryon.LongTermPut{Value: json.RawMessage(`1`)}); carryon.ErrorCode(err) != carryon.EUNAUTHORIZED {
				t.Fatalf("Put without a user: %v", err)
			}
			if _, err := svc.Search(context.Background(), carryon.LongTermSearch{}); carryon.ErrorCode(err) != carryon.EUNAUTHORIZED {
				t.Fatalf("Search without a user: %v", err)
			}
			bad := []struct {
				ns, key string
				in      carryon.LongTermPut
			}{
				{"", "k", carryon.LongTermPut{Value: json.RawMessage(`1`)}},
				{"Prefs", "k", carryon.LongTermPut{Value: json.RawMessage(`1`)}},
				{"prefs.", "k", carryon.LongTermPut{Value: json.RawMessage(`1`)}},
				{"a..b", "k", carryon.LongTermPut{Value: json.RawMessage(`1`)}},
				{"a%b", "k", carryon.LongTermPut{Value: json.RawMessage(`1`)}},
				{"prefs", "", carryon.LongTermPut{Value: json.RawMessage(`1`)}},
				{"prefs", "a/b", carryon.LongTermPut{Value: json.RawMessage(`1`)}},
				{"prefs", string(make([]byte, 201)), carryon.LongTermPut{Value: json.RawMessage(`1`)}},
				{"prefs", "k", carryon.LongTermPut{}},
				{"prefs", "k", carryon.LongTermPut{Value: json.RawMessage(`{nope`)}},
				{"prefs", "k", carryon.LongTermPut{Value: json.RawMessage(`1`), TTLSeconds: -1}},
				{"prefs", "k", carryon.LongTermPut{Value: json.RawMessage(`1`), Text: "nul\x00"}},
			}
			for _, b := range bad {
				if _, err := svc.Put(alice, b.ns, b.key, b.in); carryon.ErrorCode(err) != carryon.EINVALID {
					t.Errorf("Put(%q, %q, %+v) = %v, want invalid_request", b.ns, b.key, b.in, err)
				}
			}
			first, err := svc.Put(alice, "prefs", "theme", carryon.LongTermPut{Value: json.RawMessage(`"dark"`), Text: "dark theme"})
			if err != nil {
				t.Fatal(err)
			}
			clk.add(time.Minute)
			second, err := svc.Put(alice, "prefs", "theme", carryon.LongTermPut{Value: json.RawMessage(`"light"`), TTLSeconds: 60})
			if err != nil || !second.CreatedAt.Equal(first.CreatedAt) || !second.UpdatedAt.After(first.UpdatedAt) || second.ExpiresAt == nil {
				t.Fatalf("replace = %+v, %v", second, err)
			}
			if _, err := svc.Get(bob, "prefs", "theme"); carryon.ErrorCode(err) != carryon.ENOTFOUND {
				t.Fatalf("bob reads alice's item: %v", err)
			}
			if err := svc.Delete(bob, "prefs", "theme", carryon.WriteOptions{}); carryon.ErrorCode(err) != carryon.ENOTFOUND {
				t.Fatalf("bob deletes alice's item: %v", err)
			}
			clk.add(2 * time.Minute) // past the TTL
			if _, err := svc.Get(alice, "prefs", "theme"); carryon.ErrorCode(err) != carryon.ENOTFOUND {
				t.Fatalf("expired item readable: %v", err)
			}
			if n, err := svc.Sweep(alice); err != nil || n != 1 {
				t.Fatalf("Sweep = %d, %v", n, err)
			}
			// Paging with cursors.
			for _, k := range []string{"a", "b", "c", "d", "e"} {
				if _, err := svc.Put(alice, "p", k, carryon.LongTermPut{Value: json.RawMessage(`1`)}); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			f := carryon.LongTermFilter{Namespace: "p", Limit: 2}
			for {
				page, err := svc.List(alice, f)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, keysOf(page.Items)...)
				if page.NextCursor == "" {
					break
				}
				f.Cursor = page.NextCursor
			}
			if want := []string{"p/a", "p/b", "p/c", "p/d", "p/e"}; !slices.Equal(got, want) {
				t.Fatalf("pages = %v", got)
			}
			if _, err := svc.List(alice, carryon.LongTermFilter{Cursor: "garbage"}); carryon.ErrorCode(err) != carryon.EINVALID {
				t.Fatalf("bad cursor: %v", err)
			}
			if page, _ := svc.List(bob, carryon.LongTermFilter{}); len(page.Items) != 0 {
				t.Fatalf("bob lists %v", keysOf(page.Items))
			}
		})
	}
}

// A search pages with limit and cursor: the pages hold the one-page answer in order, scores stay
// relative to the best result, and a cursor continues only the search it came from.
func TestSearchPages(t *testing.T) {
	t.Parallel()
	for name, st := range drivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			svc := longterm.New(st, nil)
			alice := carryon.NewContextWithUser(context.Background(), &carryon.User{ID: "usr_alice", Name: "alice"})
			for i, text := range []string{"green tea", "green tea green tea", "tea", "black tea", "tea tea tea", "coffee"} {
				if _, err := svc.Put(alice, "drinks", fmt.Sprint("k", i), carryon.LongTermPut{Value: json.RawMessage(`1`), Text: text}); err != nil {
					t.Fatal(err)
				}
			}
			all, err := svc.Search(alice, carryon.LongTermSearch{Query: "green tea", Limit: 100})
			if err != nil || len(all.Items) != 5 || all.NextCursor != "" {
				t.Fatalf("one page: %v, %d items, next %q", err, len(all.Items), all.NextCursor)
			}
			var paged []*carryon.LongTermItem
			in := carryon.LongTermSearch{Query: "green tea", Limit: 2}
			for range 10 {
				res, err := svc.Search(alice, in)
				if err != nil {
					t.Fatal(err)
				}
				paged = append(paged, res.Items...)
				if res.NextCursor == "" {
					break
				}
				in.Cursor = res.NextCursor
			}
			if len(paged) != len(all.Items) {
				t.Fatalf("paged %d items, want %d", len(paged), len(all.Items))
			}
			for i := range paged {
				if paged[i].Key != all.Items[i].Key || paged[i].Score != all.Items[i].Score {
					t.Fatalf("item %d: paged %s (%v), one page %s (%v)", i, paged[i].Key, paged[i].Score, all.Items[i].Key, all.Items[i].Score)
				}
			}
			first, _ := svc.Search(alice, carryon.LongTermSearch{Query: "green tea", Limit: 2})
			for _, other := range []carryon.LongTermSearch{
				{Query: "black tea", Cursor: first.NextCursor},
				{Query: "green tea", Namespace: "other", Cursor: first.NextCursor},
				{Query: "green tea", Cursor: "bm9wZQ"},
			} {
				if _, err := svc.Search(alice, other); carryon.ErrorCode(err) != carryon.EINVALID {
					t.Fatalf("search %+v: %v, want EINVALID", other, err)
				}
			}
		})
	}
}

// TestItemVersions: a put counts the item's versions; a put or delete that expects a version
// writes only at that version (0: only when there is no item), else EVERSION with the current
// one, and nothing changes.
func TestItemVersions(t *testing.T) {
	t.Parallel()
	for name, st := range drivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			svc := longterm.New(st, nil)
			alice := as("usr_alice")
			put := func(value string, expected *int64) (*carryon.LongTermItem, error) {
				return svc.Put(alice, "adk.app", "state", carryon.LongTermPut{Value: json.RawMessage(value), WriteOptions: carryon.WriteOptions{ExpectedVersion: expected}})
			}
			conflict := func(err error, current int64) {
				t.Helper()
				e, ok := carryon.AsError(err)
				if !ok || e.Code != carryon.EVERSION || e.CurrentVersion != current {
					t.Fatalf("error = %v; want a version conflict at %d", err, current)
				}
			}
			if it, err := put(`{"n":1}`, carryon.Ptr[int64](0)); err != nil || it.Version != 1 {
				t.Fatalf("create-only put = %+v, %v", it, err)
			}
			_, err := put(`{"n":2}`, carryon.Ptr[int64](0))
			conflict(err, 1)
			if it, err := put(`{"n":2}`, carryon.Ptr[int64](1)); err != nil || it.Version != 2 {
				t.Fatalf("put at version 1 = %+v, %v", it, err)
			}
			if it, err := put(`{"n":3}`, nil); err != nil || it.Version != 3 {
				t.Fatalf("unconditional put = %+v, %v", it, err)
			}
			_, err = put(`{"n":4}`, carryon.Ptr[int64](2))
			conflict(err, 3)
			if _, err := put(`1`, carryon.Ptr[int64](-1)); carryon.ErrorCode(err) != carryon.EINVALID {
				t.Fatalf("expected version -1: %v", err)
			}
			conflict(svc.Delete(alice, "adk.app", "state", carryon.WriteOptions{ExpectedVersion: carryon.Ptr[int64](2)}), 3)
			if it, err := svc.Get(alice, "adk.app", "state"); err != nil || it.Version != 3 || string(it.Value) != `{"n":3}` {
				t.Fatalf("after refused writes: %+v, %v", it, err)
			}
			if err := svc.Delete(alice, "adk.app", "state", carryon.WriteOptions{ExpectedVersion: carryon.Ptr[int64](3)}); err != nil {
				t.Fatal(err)
			}
			if it, err := put(`{"n":1}`, carryon.Ptr[int64](0)); err != nil || it.Version != 1 {
				t.Fatalf("put after the delete = %+v, %v; the item starts again at version 1", it, err)
			}
		})
	}
}
