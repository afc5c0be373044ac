package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// longTermStore wraps a store with the long-term memory calls the suite makes.
type longTermStore struct {
	t  *testing.T
	st store.Store
}

func (m longTermStore) put(owner, ns, key, value, text string, expires *time.Time) {
	m.t.Helper()
	it := &carryon.LongTermItem{Namespace: ns, Key: key, Value: json.RawMessage(value), Text: text,
		CreatedAt: at(0), UpdatedAt: at(0), ExpiresAt: expires}
	write(m.t, m.st, func(tx store.Tx) error { return tx.PutLongTermItem(m.t.Context(), owner, it) })
}

func (m longTermStore) get(owner, ns, key string, now time.Time) (*carryon.LongTermItem, error) {
	var it *carryon.LongTermItem
	err := m.st.Read(m.t.Context(), func(tx store.Tx) error {
		var err error
		it, err = tx.GetLongTermItem(m.t.Context(), owner, ns, key, now)
		return err
	})
	return it, err
}

func (m longTermStore) list(owner string, q store.LongTermQuery) []*carryon.LongTermItem {
	m.t.Helper()
	var out []*carryon.LongTermItem
	read(m.t, m.st, func(tx store.Tx) error {
		var err error
		out, err = tx.ListLongTermItems(m.t.Context(), owner, q)
		return err
	})
	return out
}

func (m longTermStore) search(owner, text, ns string, now time.Time, limit int) []*carryon.LongTermItem {
	m.t.Helper()
	var out []*carryon.LongTermItem
	read(m.t, m.st, func(tx store.Tx) error {
		var err error
		out, err = tx.SearchLongTermItems(m.t.Context(), owner, store.LongTermSearchQuery{Text: text, Namespace: ns, Now: now, Limit: limit})
		return err
	})
	return out
}

// refs names items as owner:namespace/key, in order.
func refs(items []*carryon.LongTermItem) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.OwnerID+":"+it.Namespace+"/"+it.Key)
	}
	return out
}

// hostileQueries are search texts that must neither fail nor widen a search.
var hostileQueries = []string{"", " ", "*", "%", "_", `"`, `""`, "'", `\`, "OR", "AND NOT", "NEAR(a b)", "u1*", "%u1%",
	"owner_id:usr_a", `" OR "" = "`, "'; DROP TABLE memories; --", "!!!", "a & b | !c", "(", "^", "-", "u1.x", "ü"}

func testLongTerm(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("Version", func(t *testing.T) {
		m := longTermStore{t, open(t)}
		ctx := t.Context()
		for _, v := range []int64{1, 2, 7} {
			it := &carryon.LongTermItem{Namespace: "prefs", Key: "editor", Value: json.RawMessage(`"vim"`), Version: v, CreatedAt: at(0), UpdatedAt: at(int(v))}
			write(t, m.st, func(tx store.Tx) error { return tx.PutLongTermItem(ctx, ownerA, it) })
			got, err := m.get(ownerA, "prefs", "editor", at(100))
			if err != nil || got.Version != v {
				t.Fatalf("after a put at version %d: %+v, %v", v, got, err)
			}
			if l := m.list(ownerA, store.LongTermQuery{Now: at(100)}); len(l) != 1 || l[0].Version != v {
				t.Fatalf("ListLongTermItems after a put at version %d: %+v", v, l)
			}
			if s := m.search(ownerA, "vim", "", at(100), 0); len(s) != 1 || s[0].Version != v {
				t.Fatalf("SearchLongTermItems after a put at version %d: %+v", v, s)
			}
		}
	})
	t.Run("OwnerIsolation", func(t *testing.T) {
		m := longTermStore{t, open(t)}
		// Colliding namespaces (u1, u1.x, u10) and identical keys under two owners.
		for _, owner := range []string{ownerA, ownerB} {
			for _, ns := range []string{"u1", "u1.x", "u10"} {
				m.put(owner, ns, "k", fmt.Sprintf(`{"who":%q}`, owner), "shared words of "+owner+" in "+ns, nil)
			}
		}
		m.put(ownerA, "prefs", "editor", `"vim"`, "alice prefers vim", nil)
		for _, owner := range []string{ownerA, ownerB} {
			for _, ns := range []string{"u1", "u1.x", "u10"} {
				it, err := m.get(owner, ns, "k", at(1))
				if err != nil || it.OwnerID != owner || !strings.Contains(string(it.Value), owner) {
					t.Fatalf("GetLongTermItem(%s, %s/k) = %+v, %v", owner, ns, it, err)
				}
			}
			for _, q := range []store.LongTermQuery{{}, {Namespace: "u1"}, {Namespace: "u10"}, {Namespace: "prefs"}} {
				q.Now = at(1)
				for _, it := range m.list(owner, q) {
					if it.OwnerID != owner {
						t.Fatalf("ListLongTermItems(%s, %+v) returned %s", owner, q, refs([]*carryon.LongTermItem{it}))
					}
				}
			}
			for _, text := range append(hostileQueries, "shared words", "alice prefers vim", ownerA, ownerB) {
				for _, ns := range []string{"", "u1", "u10", "prefs"} {
					for _, it := range m.search(owner, text, ns, at(1), 0) {
						if it.OwnerID != owner || !carryon.InNamespace(it.Namespace, ns) {
							t.Fatalf("SearchLongTermItems(%s, %q, %q) returned %s", owner, text, ns, refs([]*carryon.LongTermItem{it}))
						}
					}
				}
			}
		}
		_, err := m.get(ownerB, "prefs", "editor", at(1))
		wantCode(t, err, carryon.ENOTFOUND)
		if got := m.search(ownerB, "alice prefers vim", "", at(1), 0); len(got) != 0 {
			t.Fatalf("B finds A's item: %v", refs(got))
		}
		if got := m.list(ownerA, store.LongTermQuery{Now: at(1)}); len(got) != 4 {
			t.Fatalf("A lists %v, want 4 items", refs(got))
		}
		// An empty owner is refused by every method.
		err = m.st.Write(t.Context(), func(_ context.Context, tx store.Tx) error {
			ctx := t.Context()
			for _, err := range []error{
				tx.PutLongTermItem(ctx, "", &carryon.LongTermItem{Namespace: "u1", Key: "k", Value: json.RawMessage(`1`)}),
				tx.DeleteLongTermItem(ctx, "", "u1", "k"),
				func() error { _, err := tx.GetLongTermItem(ctx, "", "u1", "k", at(1)); return err }(),
				func() error { _, err := tx.ListLongTermItems(ctx, "", store.LongTermQuery{Now: at(1)}); return err }(),
				func() error {
					_, err := tx.SearchLongTermItems(ctx, "", store.LongTermSearchQuery{Text: "shared", Now: at(1)})
					return err
				}(),
			} {
				wantCode(t, err, carryon.EINVALID)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("Subtree", func(t *testing.T) {
		m := longTermStore{t, open(t)}
		for _, ns := range []string{"u1", "u1.x", "u1.x.y", "u10", "u1_", "u1-", "u", "v1"} {
			m.put(ownerA, ns, "k", `1`, "needle", nil)
		}
		want := map[string][]string{
			"u1":   {"u1", "u1.x", "u1.x.y"},
			"u1.x": {"u1.x", "u1.x.y"},
			"u":    {"u"},
			"u10":  {"u10"},
			"u1_":  {"u1_"},
			"":     {"u", "u1", "u1-", "u1.x", "u1.x.y", "u10", "u1_", "v1"},
		}
		for ns, w := range want {
			var got []string
			for _, it := range m.list(ownerA, store.LongTermQuery{Namespace: ns, Now: at(1)}) {
				got = append(got, it.Namespace)
			}
			if !slices.Equal(got, w) {
				t.Errorf("list %q = %v, want %v", ns, got, w)
			}
			got = nil
			for _, it := range m.search(ownerA, "needle", ns, at(1), 0) {
				got = append(got, it.Namespace)
			}
			slices.Sort(got)
			if !slices.Equal(got, w) {
				t.Errorf("search %q = %v, want %v", ns, got, w)
			}
		}
	})

	t.Run("Paging", func(t *testing.T) {
		m := longTermStore{t, open(t)}
		for _, k := range []string{"c", "a", "b"} {
			m.put(ownerA, "p", k, `1`, "", nil)
			m.put(ownerA, "p.q", k, `1`, "", nil)
		}
		var got []string
		q := store.LongTermQuery{Now: at(1), Limit: 2}
		for {
			page := m.list(ownerA, q)
			for _, it := range page {
				got = append(got, it.Namespace+"/"+it.Key)
			}
			if len(page) < q.Limit {
				break
			}
			last := page[len(page)-1]
			q.AfterNamespace, q.AfterKey = last.Namespace, last.Key
		}
		if want := []string{"p/a", "p/b", "p/c", "p.q/a", "p.q/b", "p.q/c"}; !slices.Equal(got, want) {
			t.Fatalf("pages = %v, want %v", got, want)
		}
	})

	t.Run("Replace", func(t *testing.T) {
		m := longTermStore{t, open(t)}
		m.put(ownerA, "prefs", "theme", `"dark"`, "likes a dark theme", nil)
		exp := at(100)
		m.put(ownerA, "prefs", "theme", `{"mode":"light"}`, "likes a light theme", &exp)
		it, err := m.get(ownerA, "prefs", "theme", at(1))
		if err != nil || !jsonEqual(it.Value, []byte(`{"mode":"light"}`)) || it.Text != "likes a light theme" ||
			it.ExpiresAt == nil || !it.ExpiresAt.Equal(exp) || !it.CreatedAt.Equal(at(0)) {
			t.Fatalf("replaced item = %+v, %v", it, err)
		}
		if got := m.search(ownerA, "dark", "", at(1), 0); len(got) != 0 {
			t.Fatalf("the replaced text still matches: %v", refs(got))
		}
		if got := m.search(ownerA, "light", "", at(1), 0); len(got) != 1 {
			t.Fatalf("the new text does not match: %v", refs(got))
		}
		// Without text, the value's strings are searched.
		m.put(ownerA, "prefs", "lang", `{"language":"Esperanto"}`, "", nil)
		if got := refs(m.search(ownerA, "esperanto", "", at(1), 0)); !slices.Equal(got, []string{ownerA + ":prefs/lang"}) {
			t.Fatalf("search of a value = %v", got)
		}
	})

	t.Run("Expiry", func(t *testing.T) {
		m := longTermStore{t, open(t)}
		exp := at(10)
		m.put(ownerA, "tmp", "soon", `1`, "ephemeral fact", &exp)
		m.put(ownerA, "tmp", "kept", `1`, "durable fact", nil)
		if _, err := m.get(ownerA, "tmp", "soon", at(9)); err != nil {
			t.Fatalf("get before expiry: %v", err)
		}
		_, err := m.get(ownerA, "tmp", "soon", at(10))
		wantCode(t, err, carryon.ENOTFOUND)
		if got := refs(m.list(ownerA, store.LongTermQuery{Now: at(10)})); !slices.Equal(got, []string{ownerA + ":tmp/kept"}) {
			t.Fatalf("list after expiry = %v", got)
		}
		for _, text := range []string{"ephemeral fact", ""} {
			if got := refs(m.search(ownerA, text, "", at(10), 0)); slices.Contains(got, ownerA+":tmp/soon") {
				t.Fatalf("search %q after expiry = %v", text, got)
			}
		}
		for _, c := range []struct {
			before time.Time
			want   bool
		}{{at(10), false}, {at(11), true}} { // 10 is not before 10
			var has bool
			read(t, m.st, func(tx store.Tx) error {
				var err error
				has, err = tx.HasExpiredLongTermItems(t.Context(), c.before)
				return err
			})
			if has != c.want {
				t.Fatalf("HasExpiredLongTermItems(%v) = %v, want %v", c.before, has, c.want)
			}
		}
		var n int64
		write(t, m.st, func(tx store.Tx) error {
			var err error
			n, err = tx.PurgeExpiredLongTermItems(t.Context(), at(10)) // 10 is not before 10
			return err
		})
		if n != 0 {
			t.Fatalf("purge at the expiry removed %d", n)
		}
		write(t, m.st, func(tx store.Tx) error {
			var err error
			n, err = tx.PurgeExpiredLongTermItems(t.Context(), at(11))
			return err
		})
		if n != 1 {
			t.Fatalf("purge removed %d, want 1", n)
		}
		if _, err := m.get(ownerA, "tmp", "soon", at(0)); carryon.ErrorCode(err) != carryon.ENOTFOUND {
			t.Fatalf("purged item still readable: %v", err)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		m := longTermStore{t, open(t)}
		m.put(ownerA, "prefs", "k", `1`, "remember the milk", nil)
		m.put(ownerB, "prefs", "k", `2`, "remember the milk", nil)
		del := func(owner string) error {
			return m.st.Write(t.Context(), func(_ context.Context, tx store.Tx) error {
				return tx.DeleteLongTermItem(t.Context(), owner, "prefs", "k")
			})
		}
		if err := del(ownerA); err != nil {
			t.Fatal(err)
		}
		wantCode(t, del(ownerA), carryon.ENOTFOUND)
		_, err := m.get(ownerA, "prefs", "k", at(1))
		wantCode(t, err, carryon.ENOTFOUND)
		if got := m.list(ownerA, store.LongTermQuery{Now: at(1)}); len(got) != 0 {
			t.Fatalf("list after delete = %v", refs(got))
		}
		for _, text := range []string{"milk", ""} {
			if got := m.search(ownerA, text, "", at(1), 0); len(got) != 0 {
				t.Fatalf("search %q after delete = %v", text, refs(got))
			}
		}
		if got := refs(m.search(ownerB, "milk", "", at(1), 0)); !slices.Equal(got, []string{ownerB + ":prefs/k"}) {
			t.Fatalf("deleting A's item changed B's: %v", got)
		}
	})

	t.Run("Ranking", func(t *testing.T) { testLongTermRanking(t, longTermStore{t, open(t)}) })

	// Another owner's many and better matches never crowd the owner's out of a limited search.
	t.Run("OwnerFirst", func(t *testing.T) {
		m := longTermStore{t, open(t)}
		for i := range 120 {
			m.put(ownerB, "notes", fmt.Sprint("b", i), `true`, "tea tea tea green tea oolong tea", nil)
		}
		m.put(ownerA, "notes", "a_weak", `true`, "once had a tea somewhere far away in a long story", nil)
		m.put(ownerA, "notes", "a_strong", `true`, "green tea", nil)
		for _, limit := range []int{1, 2, 5} {
			got := m.search(ownerA, "green tea", "", at(1), limit)
			want := []string{ownerA + ":notes/a_strong", ownerA + ":notes/a_weak"}
			if limit < len(want) {
				want = want[:limit]
			}
			if !slices.Equal(refs(got), want) {
				t.Fatalf("search limit %d = %v, want %v", limit, refs(got), want)
			}
		}
	})
}

// testLongTermRanking checks the order of results on a small fixed corpus: items matching more of
// the query's words, or its rarer words, come first; an empty query gives the newest items.
func testLongTermRanking(t *testing.T, m longTermStore) {
	corpus := []struct{ key, text string }{
		{"editor", "prefers the vim editor with a dark colour scheme"},
		{"theme", "the terminal uses a dark colour scheme"},
		{"coffee", "drinks black coffee every morning"},
		{"tea", "drinks green tea in the afternoon"},
		{"deploy", "deploys to production on fridays after review"},
		{"review", "code review needs two approvals before merge"},
		{"lang", "writes backend services in go"},
		{"tabs", "indents go code with tabs not spaces"},
	}
	for i, c := range corpus {
		it := &carryon.LongTermItem{Namespace: "prefs", Key: c.key, Value: json.RawMessage(`true`), Text: c.text,
			CreatedAt: at(i), UpdatedAt: at(i)}
		write(t, m.st, func(tx store.Tx) error { return tx.PutLongTermItem(t.Context(), ownerA, it) })
	}
	keys := func(items []*carryon.LongTermItem) []string {
		out := []string{}
		for _, it := range items {
			out = append(out, it.Key)
		}
		return out
	}
	cases := []struct {
		query string
		top   []string // the first results, in order
		all   int      // how many match in all (-1: don't check)
	}{
		{"which editor and colour scheme do I prefer?", []string{"editor", "theme"}, -1},
		{"coffee", []string{"coffee"}, 1},
		{"green tea", []string{"tea"}, -1},
		{"how many approvals does a review need", []string{"review", "deploy"}, -1},
		{"go tabs", []string{"tabs", "lang"}, 2},
		{"nothing matches zyzzyva", nil, 0},
		{"", []string{"tabs", "lang", "review"}, 8}, // no terms: newest first
		{"?!", []string{"tabs", "lang", "review"}, 8},
	}
	for _, c := range cases {
		got := m.search(ownerA, c.query, "", at(100), 0)
		if len(got) < len(c.top) || !slices.Equal(keys(got)[:len(c.top)], c.top) {
			t.Errorf("search %q = %v, want %v first", c.query, keys(got), c.top)
		}
		if c.all >= 0 && len(got) != c.all {
			t.Errorf("search %q = %v, want %d results", c.query, keys(got), c.all)
		}
		terms := len(store.SearchTerms(c.query)) > 0
		for i, it := range got {
			if terms && (it.Score <= 0 || i > 0 && it.Score > got[i-1].Score) {
				t.Errorf("search %q: scores not positive and descending: %v at %d", c.query, it.Score, i)
			}
			if !terms && it.Score != 0 {
				t.Errorf("search %q without terms has score %v", c.query, it.Score)
			}
		}
	}
	if got := m.search(ownerA, "drinks", "", at(100), 1); len(got) != 1 {
		t.Errorf("limit 1 returned %d", len(got))
	}
}
