package longterm

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// mapEmbedder answers the vector set for a text, else a random unit vector seeded by the text.
type mapEmbedder map[string][]float32

func (mapEmbedder) Name() string { return "map" }

func (m mapEmbedder) Embed(_ context.Context, req model.EmbedRequest) (model.EmbedResponse, error) {
	out := model.EmbedResponse{Model: req.Model}
	for _, in := range req.Inputs {
		v := m[in]
		if v == nil {
			h := fnv.New64a()
			h.Write([]byte(in))
			v = gaussian(rand.New(rand.NewPCG(h.Sum64(), 3)), req.Dimensions, 1, nil)
		}
		out.Vectors = append(out.Vectors, v)
	}
	return out, nil
}

// TestPrefilterThroughTheService: a user whose cached vectors are above the threshold (25,000
// rows beside the store's items) has a fact consolidated into its planted near duplicate, and
// searches by meaning that answer the user's nearest item, never another user's vector equal to
// the query nor a stale vector of another model equal to it.
func TestPrefilterThroughTheService(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, id := range []string{"usr_a", "usr_b"} {
		if err := st.Write(ctx, func(_ context.Context, tx store.Tx) error {
			return tx.InsertUser(ctx, &carryon.User{ID: id, Name: id, CreatedAt: time.Unix(1, 0).UTC()})
		}); err != nil {
			t.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(21, 1))
	q := gaussian(r, 384, 1, nil)
	fact := gaussian(r, 384, 1, nil)
	emb := mapEmbedder{
		"the query":           q,
		"bob's answer":        q,
		"alice's answer":      gaussian(r, 384, 1.2/math.Sqrt(384), q), // similarity about 0.6
		"a fact":              fact,
		"the same fact again": gaussian(r, 384, 0.2/math.Sqrt(384), fact),
	}
	svc := New(st, nil).WithEmbeddings(&Embeddings{Embedder: emb, Model: "m", Dimensions: 384})
	userCtx := func(id string) context.Context { return carryon.NewContextWithUser(ctx, &carryon.User{ID: id}) }
	putText := func(owner, key, text string) {
		v, _ := json.Marshal(text)
		if _, err := svc.Put(userCtx(owner), "notes", key, carryon.LongTermPut{Value: v, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	putText("usr_b", "theirs", "bob's answer")
	putText("usr_a", "mine", "alice's answer")
	putText("usr_a", "fact", "a fact")
	putText("usr_a", "stale", "a stale vector")
	if err := st.Write(ctx, func(_ context.Context, tx store.Tx) error {
		_, err := tx.SetLongTermVector(ctx, "usr_a", "notes", "stale", 1, store.Vector{Model: "older", Values: q})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// usr_a's cached set: the store's rows and 25,000 more (not in the store: a search skips
	// them when it reads the items, after scoring them).
	var set *vectorSet
	if err := st.Read(ctx, func(tx store.Tx) error {
		var err error
		set, err = svc.vectors.get(ctx, tx, "usr_a", "m", -1)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for i := range 25000 {
		set.add("notes", fmt.Sprintf("syn%d", i), nil, gaussian(r, 384, 1, nil))
	}
	svc.vectors.put(set)

	added, err := svc.Add(userCtx("usr_a"), "notes", carryon.LongTermAdd{Text: "the same fact again"})
	if err != nil || added.ConsolidatedInto != "fact" {
		t.Fatalf("add of a near duplicate: %+v, %v", added, err)
	}
	if n := len(svc.vectors.byOwn["usr_a"].keys); n <= prefilterRows {
		t.Fatalf("the cached set has %d rows after the add: not above the threshold", n)
	}
	res, err := svc.Search(userCtx("usr_a"), carryon.LongTermSearch{Query: "the query", Mode: carryon.SearchSemantic, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) == 0 || res.Items[0].Key != "mine" || *res.Items[0].Scores.Semantic < 0.5 {
		t.Fatalf("search: %+v", res.Items)
	}
	for _, it := range res.Items {
		if it.OwnerID != "usr_a" || it.Key == "stale" || it.Key == "theirs" {
			t.Fatalf("search answered %s's %s", it.OwnerID, it.Key)
		}
	}
}

// watchedStore records a statement a read transaction runs after it read an owner's vectors.
type watchedStore struct {
	store.Store
	mu    sync.Mutex
	after []string
}

type watchedTx struct {
	store.Tx
	s       *watchedStore
	vectors bool
}

func (s *watchedStore) Read(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.Read(ctx, func(tx store.Tx) error { return fn(&watchedTx{Tx: tx, s: s}) })
}

func (t *watchedTx) LongTermVectors(ctx context.Context, owner, model string) (int64, []store.VectorRow, error) {
	t.vectors = true
	return t.Tx.LongTermVectors(ctx, owner, model)
}

func (t *watchedTx) GetLongTermItem(ctx context.Context, owner, ns, key string, now time.Time) (*carryon.LongTermItem, error) {
	if t.vectors {
		t.s.mu.Lock()
		t.s.after = append(t.s.after, "GetLongTermItem")
		t.s.mu.Unlock()
	}
	return t.Tx.GetLongTermItem(ctx, owner, ns, key, now)
}

// TestColdSearchReadsVectorsAlone: an owner's first search on an instance reads the owner's
// vectors in a transaction that does nothing after it, so that making the set (long at 100,000
// vectors) does not hold the search's transaction idle (PostgreSQL ends a transaction idle for
// 10 s: the 100k benchmark's first semantic search failed so).
func TestColdSearchReadsVectorsAlone(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, err := sqlite.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Write(ctx, func(_ context.Context, tx store.Tx) error {
		return tx.InsertUser(ctx, &carryon.User{ID: "usr_a", Name: "a", CreatedAt: time.Unix(1, 0).UTC()})
	}); err != nil {
		t.Fatal(err)
	}
	st := &watchedStore{Store: db}
	writer := New(db, nil).WithEmbeddings(&Embeddings{Embedder: mapEmbedder{}, Model: "m", Dimensions: 16})
	v, _ := json.Marshal("a fact")
	if _, err := writer.Put(carryon.NewContextWithUser(ctx, &carryon.User{ID: "usr_a"}), "notes", "k", carryon.LongTermPut{Value: v, Text: "a fact"}); err != nil {
		t.Fatal(err)
	}
	svc := New(st, nil).WithEmbeddings(&Embeddings{Embedder: mapEmbedder{}, Model: "m", Dimensions: 16})
	res, err := svc.Search(carryon.NewContextWithUser(ctx, &carryon.User{ID: "usr_a"}), carryon.LongTermSearch{Query: "a fact", Mode: carryon.SearchSemantic})
	if err != nil || len(res.Items) != 1 || res.Items[0].Key != "k" {
		t.Fatalf("search: %+v, %v", res, err)
	}
	if len(st.after) > 0 {
		t.Fatalf("a transaction read items after the vectors: %v", st.after)
	}
}
