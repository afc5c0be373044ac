package longterm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/longterm"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/embedtest"
	"github.com/carryon-hub/carryon/internal/model/openai"
	"github.com/carryon-hub/carryon/internal/store"
)

// semantic returns a memory service over st whose vectors come from a fake embeddings server
// where sushi, food, likes and loves mean one thing, and the server.
func semantic(t *testing.T, st store.Store, modelName string) (*longterm.Service, *embedtest.Server) {
	srv := embedtest.New(t, 64)
	srv.Concept("sushi", "food", "like", "likes", "loves", "eat")
	return withEmbeddings(st, srv, modelName), srv
}

func withEmbeddings(st store.Store, srv *embedtest.Server, modelName string) *longterm.Service {
	p := openai.New(openai.Config{BaseURL: srv.URL})
	return longterm.New(st, nil).WithEmbeddings(&longterm.Embeddings{
		Embedder: model.WithEmbedRetry(p, model.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}),
		Model:    modelName, Dimensions: 64, Timeout: 2 * time.Second,
	})
}

func search(t *testing.T, svc *longterm.Service, owner string, in carryon.LongTermSearch) *carryon.LongTermResults {
	t.Helper()
	res, err := svc.Search(as(owner), in)
	if err != nil {
		t.Fatalf("search %+v: %v", in, err)
	}
	return res
}

func put(t *testing.T, svc *longterm.Service, owner, ns, key, text string) {
	t.Helper()
	v, _ := json.Marshal(text)
	if _, err := svc.Put(as(owner), ns, key, carryon.LongTermPut{Value: v, Text: text}); err != nil {
		t.Fatal(err)
	}
}

// TestSemanticRecall: a question that shares no word with a fact finds it by meaning in hybrid
// and semantic mode, never in keyword mode, never another user's; the scores say which ranking
// found what.
func TestSemanticRecall(t *testing.T) {
	t.Parallel()
	for name, st := range drivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			svc, _ := semantic(t, st, "m1")
			put(t, svc, "usr_alice", "prefs", "k1", "loves sushi")
			put(t, svc, "usr_alice", "prefs", "k2", "the sky is blue on clear days")
			put(t, svc, "usr_alice", "prefs", "k3", "green tea in the morning; she does not like coffee")
			put(t, svc, "usr_bob", "prefs", "k1", "bob loves sushi too")
			q := "what food does she like?"

			kw := search(t, svc, "usr_alice", carryon.LongTermSearch{Query: q, Mode: carryon.SearchKeyword})
			if kw.Mode != carryon.SearchKeyword || len(kw.Items) != 1 || kw.Items[0].Key != "k3" {
				t.Fatalf("keyword: %s", dump(kw))
			}
			hy := search(t, svc, "usr_alice", carryon.LongTermSearch{Query: q})
			if hy.Mode != carryon.SearchHybrid || len(hy.Items) < 2 || hy.Items[0].Key != "k1" && hy.Items[1].Key != "k1" {
				t.Fatalf("hybrid: %s", dump(hy))
			}
			for _, it := range hy.Items {
				if it.OwnerID != "usr_alice" {
					t.Fatalf("hybrid returned %s's item", it.OwnerID)
				}
				if it.Key == "k1" && (it.Scores == nil || it.Scores.Semantic == nil || it.Scores.Keyword != nil) {
					t.Fatalf("food's scores: %+v", it.Scores)
				}
				if it.Key == "k3" && (it.Scores == nil || it.Scores.Keyword == nil) {
					t.Fatalf("tea's scores: %+v", it.Scores)
				}
			}
			se := search(t, svc, "usr_alice", carryon.LongTermSearch{Query: q, Mode: carryon.SearchSemantic, Limit: 1})
			if len(se.Items) != 1 || se.Items[0].Key != "k1" || se.Items[0].Score < 0.5 || se.Items[0].Score > 1 || se.NextCursor == "" {
				t.Fatalf("semantic: %s", dump(se))
			}
			// min_score drops what is less similar; a filter keeps matching values only.
			if r := search(t, svc, "usr_alice", carryon.LongTermSearch{Query: q, Mode: carryon.SearchSemantic, MinScore: 0.99}); len(r.Items) != 0 {
				t.Fatalf("min_score 0.99: %s", dump(r))
			}
			if r := search(t, svc, "usr_alice", carryon.LongTermSearch{Query: q, Filter: map[string]json.RawMessage{"kind": json.RawMessage(`"x"`)}}); len(r.Items) != 0 {
				t.Fatalf("filter on a field no value has: %s", dump(r))
			}
			// Bob finds only his.
			for _, mode := range []carryon.SearchMode{carryon.SearchHybrid, carryon.SearchSemantic, carryon.SearchKeyword} {
				r := search(t, svc, "usr_bob", carryon.LongTermSearch{Query: "sushi " + q, Mode: mode})
				for _, it := range r.Items {
					if it.OwnerID != "usr_bob" {
						t.Fatalf("bob's %s search returned %s", mode, dump(r))
					}
				}
			}
			// Bad input.
			for _, in := range []carryon.LongTermSearch{{Mode: carryon.SearchSemantic}, {Query: "x", Mode: "vector"}, {Query: "x", MinScore: 2}} {
				if _, err := svc.Search(as("usr_alice"), in); carryon.ErrorCode(err) != carryon.EINVALID {
					t.Fatalf("search %+v: %v, want EINVALID", in, err)
				}
			}
		})
	}
}

func dump(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestSemanticWithoutEmbeddings: a server without embeddings searches by keywords (and says so)
// and refuses semantic mode with the reason.
func TestSemanticWithoutEmbeddings(t *testing.T) {
	t.Parallel()
	for name, st := range drivers(t) {
		t.Run(name, func(t *testing.T) {
			svc := longterm.New(st, nil)
			put(t, svc, "usr_alice", "prefs", "food", "loves sushi")
			if r := search(t, svc, "usr_alice", carryon.LongTermSearch{Query: "sushi"}); r.Mode != carryon.SearchKeyword || len(r.Items) != 1 {
				t.Fatalf("hybrid without embeddings: %s", dump(r))
			}
			if _, err := svc.Search(as("usr_alice"), carryon.LongTermSearch{Query: "sushi", Mode: carryon.SearchSemantic}); carryon.ErrorCode(err) != carryon.EINVALID {
				t.Fatalf("semantic without embeddings: %v", err)
			}
			// Consolidation without vectors: the same text, case and spaces aside.
			a, err := svc.Add(as("usr_alice"), "facts", carryon.LongTermAdd{Text: "Likes  green tea"})
			if err != nil {
				t.Fatal(err)
			}
			b, err := svc.Add(as("usr_alice"), "facts", carryon.LongTermAdd{Text: "likes green tea"})
			if err != nil || b.ConsolidatedInto != a.Key || b.Version != 2 || b.Supersedes == nil || b.Supersedes.Text != "Likes  green tea" {
				t.Fatalf("second add: %s, %v", dump(b), err)
			}
			c, err := svc.Add(as("usr_alice"), "facts", carryon.LongTermAdd{Text: "likes black tea"})
			if err != nil || c.ConsolidatedInto != "" || c.Key == a.Key {
				t.Fatalf("another fact: %s, %v", dump(c), err)
			}
		})
	}
}

// TestConsolidation: a near duplicate updates the item it duplicates, keeping the value it
// replaced; the same fact again changes nothing; another namespace or user is never touched;
// concurrent adds of near duplicates end as one item on every driver.
func TestConsolidation(t *testing.T) {
	t.Parallel()
	for name, st := range drivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			svc, _ := semantic(t, st, "m1")
			ctx := as("usr_alice")
			first, err := svc.Add(ctx, "facts", carryon.LongTermAdd{Text: "alice loves sushi"})
			if err != nil || first.ConsolidatedInto != "" || first.Version != 1 {
				t.Fatalf("first add: %s, %v", dump(first), err)
			}
			same, err := svc.Add(ctx, "facts", carryon.LongTermAdd{Text: "alice loves sushi"})
			if err != nil || same.ConsolidatedInto != first.Key || same.Version != 1 || same.Supersedes != nil || same.Similarity < 0.999 {
				t.Fatalf("same fact: %s, %v", dump(same), err)
			}
			near, err := svc.Add(ctx, "facts", carryon.LongTermAdd{Text: "alice really loves sushi", Value: json.RawMessage(`{"food":"sushi"}`)})
			if err != nil || near.ConsolidatedInto != first.Key || near.Version != 2 || near.Supersedes == nil || near.Supersedes.Version != 1 || near.Similarity < 0.9 {
				t.Fatalf("near duplicate: %s, %v", dump(near), err)
			}
			vs, err := svc.Versions(ctx, "facts", first.Key)
			if err != nil || len(vs.Items) != 1 || vs.Items[0].Text != "alice loves sushi" {
				t.Fatalf("versions: %s, %v", dump(vs), err)
			}
			other, err := svc.Add(ctx, "facts", carryon.LongTermAdd{Text: "the sky is blue"})
			if err != nil || other.ConsolidatedInto != "" {
				t.Fatalf("unrelated fact: %s, %v", dump(other), err)
			}
			if a, err := svc.Add(ctx, "elsewhere", carryon.LongTermAdd{Text: "alice loves sushi"}); err != nil || a.ConsolidatedInto != "" {
				t.Fatalf("another namespace: %s, %v", dump(a), err)
			}
			if a, err := svc.Add(as("usr_bob"), "facts", carryon.LongTermAdd{Text: "alice loves sushi"}); err != nil || a.ConsolidatedInto != "" {
				t.Fatalf("another user: %s, %v", dump(a), err)
			}
			// The update is what search finds.
			r := search(t, svc, "usr_alice", carryon.LongTermSearch{Query: "what food", Namespace: "facts", Mode: carryon.SearchSemantic, Limit: 1})
			if len(r.Items) != 1 || r.Items[0].Text != "alice really loves sushi" {
				t.Fatalf("search after consolidation: %s", dump(r))
			}

			// Concurrent near duplicates: one item.
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for i := range 8 {
				wg.Go(func() {
					// all the same concept: similarity 1
					text := []string{"loves sushi", "likes sushi", "eat sushi", "loves food", "likes food", "food like", "sushi loves", "eat food"}[i]
					_, err := svc.Add(ctx, "race", carryon.LongTermAdd{Text: text})
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			page, err := svc.List(ctx, carryon.LongTermFilter{Namespace: "race"})
			if err != nil || len(page.Items) != 1 {
				t.Fatalf("after 8 concurrent near duplicates: %s, %v", dump(page), err)
			}
		})
	}
}

// TestStaleVectors: an item stored while the provider fails (down, or answering the wrong size)
// is stored without a vector and found by keywords; the re-embedding job makes its vector once
// the provider is back; a change of model makes every item stale until the job has run, and
// search keeps answering meanwhile.
func TestStaleVectors(t *testing.T) {
	t.Parallel()
	for name, st := range drivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			svc, srv := semantic(t, st, "m1")
			srv.Status(http.StatusServiceUnavailable)
			put(t, svc, "usr_alice", "prefs", "food", "loves sushi")
			srv.Status(0)
			srv.WrongDimensions(true)
			put(t, svc, "usr_alice", "prefs", "drink", "likes green tea")
			srv.WrongDimensions(false)
			if r := search(t, svc, "usr_alice", carryon.LongTermSearch{Query: "what food", Mode: carryon.SearchSemantic}); len(r.Items) != 0 {
				t.Fatalf("semantic search of items without vectors: %s", dump(r))
			}
			if r := search(t, svc, "usr_alice", carryon.LongTermSearch{Query: "sushi"}); len(r.Items) != 1 {
				t.Fatalf("hybrid search of an item without a vector: %s", dump(r))
			}
			n, err := svc.Reembed(t.Context(), "inst_a")
			if err != nil || n != 2 {
				t.Fatalf("Reembed = %d, %v; want 2", n, err)
			}
			if r := search(t, svc, "usr_alice", carryon.LongTermSearch{Query: "what food", Mode: carryon.SearchSemantic}); len(r.Items) != 2 {
				t.Fatalf("semantic search after re-embedding: %s", dump(r))
			}
			if n, err := svc.Reembed(t.Context(), "inst_a"); err != nil || n != 0 {
				t.Fatalf("second Reembed = %d, %v; want 0", n, err)
			}
			// Another instance cannot run the job while inst_a's lease runs.
			if n, err := svc.Reembed(t.Context(), "inst_b"); err != nil || n != 0 {
				t.Fatalf("Reembed by another instance = %d, %v", n, err)
			}
			// A new model: stale until re-embedded; keywords still answer.
			svc2 := withEmbeddings(st, srv, "m2")
			if r := search(t, svc2, "usr_alice", carryon.LongTermSearch{Query: "what food", Mode: carryon.SearchSemantic}); len(r.Items) != 0 {
				t.Fatalf("semantic search with a new model before re-embedding: %s", dump(r))
			}
			if r := search(t, svc2, "usr_alice", carryon.LongTermSearch{Query: "sushi"}); len(r.Items) != 1 {
				t.Fatalf("hybrid search with a new model before re-embedding: %s", dump(r))
			}
			// The provider down for a query: hybrid falls back to keywords, semantic is unavailable.
			srv.Status(http.StatusServiceUnavailable)
			if r := search(t, svc, "usr_alice", carryon.LongTermSearch{Query: "sushi"}); r.Mode != carryon.SearchKeyword || len(r.Items) != 1 {
				t.Fatalf("hybrid with the provider down: %s", dump(r))
			}
			if _, err := svc.Search(as("usr_alice"), carryon.LongTermSearch{Query: "sushi", Mode: carryon.SearchSemantic}); carryon.ErrorCode(err) != carryon.EUNAVAILABLE {
				t.Fatalf("semantic with the provider down: %v", err)
			}
		})
	}
}

// TestVectorsAcrossInstances: two services on one store (two instances) see each other's writes
// in semantic search at once: the cached vectors are checked against the owner's counter.
func TestVectorsAcrossInstances(t *testing.T) {
	t.Parallel()
	for name, st := range drivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a, srv := semantic(t, st, "m1")
			b := withEmbeddings(st, srv, "m1")
			q := carryon.LongTermSearch{Query: "food", Mode: carryon.SearchSemantic}
			put(t, a, "usr_alice", "prefs", "one", "loves sushi")
			if r := search(t, a, "usr_alice", q); len(r.Items) != 1 {
				t.Fatalf("a: %s", dump(r))
			}
			put(t, b, "usr_alice", "prefs", "two", "likes to eat")
			if r := search(t, a, "usr_alice", q); len(r.Items) != 2 {
				t.Fatalf("a after b's put: %s", dump(r))
			}
			if err := b.Delete(as("usr_alice"), "prefs", "one", carryon.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			if r := search(t, a, "usr_alice", q); len(r.Items) != 1 || r.Items[0].Key != "two" {
				t.Fatalf("a after b's delete: %s", dump(r))
			}
			// a's own writes patch its cache and are found.
			put(t, a, "usr_alice", "prefs", "three", "sushi again")
			if err := a.Delete(as("usr_alice"), "prefs", "two", carryon.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			if r := search(t, a, "usr_alice", q); len(r.Items) != 1 || r.Items[0].Key != "three" {
				t.Fatalf("a after its own writes: %s", dump(r))
			}
		})
	}
}

// failingVector is a store whose transactions fail to write a vector: the write of the item and
// its vector is one transaction, so the item is not stored either.
type failingVector struct{ store.Store }

type failingVectorTx struct{ store.Tx }

func (f failingVector) Write(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	return f.Store.Write(ctx, func(ctx context.Context, tx store.Tx) error { return fn(ctx, failingVectorTx{tx}) })
}

func (failingVectorTx) SetLongTermVector(context.Context, string, string, string, int64, store.Vector) (bool, error) {
	return false, errors.New("disk full")
}

// TestItemAndVectorOneWrite: a failure to write the vector leaves no item (both or neither).
func TestItemAndVectorOneWrite(t *testing.T) {
	t.Parallel()
	for name, st := range drivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, srv := semantic(t, st, "m1")
			svc := withEmbeddings(failingVector{st}, srv, "m1")
			if _, err := svc.Put(as("usr_alice"), "prefs", "food", carryon.LongTermPut{Value: json.RawMessage(`"x"`), Text: "loves sushi"}); err == nil {
				t.Fatal("put with a failing vector write succeeded")
			}
			if _, err := svc.Get(as("usr_alice"), "prefs", "food"); carryon.ErrorCode(err) != carryon.ENOTFOUND {
				t.Fatalf("item after the failed write: %v", err)
			}
		})
	}
}
