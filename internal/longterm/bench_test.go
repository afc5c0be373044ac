package longterm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/bench"
	"github.com/carryon-hub/carryon/internal/longterm"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/store/postgres"
	"github.com/carryon-hub/carryon/store/sqlite"
	"github.com/jackc/pgx/v5"
)

// benchDims is the size of the benchmarks' vectors: that of the small models people run
// themselves (all-MiniLM, bge-small: 384).
const benchDims = 384

// randomEmbedder answers a random unit vector per text, seeded by the text, in process: the
// benchmarks measure carryon's search, not a provider's latency.
type randomEmbedder struct{}

func (randomEmbedder) Name() string { return "random" }

func (randomEmbedder) Embed(_ context.Context, req model.EmbedRequest) (model.EmbedResponse, error) {
	out := model.EmbedResponse{Model: req.Model}
	for _, in := range req.Inputs {
		var seed uint64
		for _, c := range in {
			seed = seed*31 + uint64(c)
		}
		out.Vectors = append(out.Vectors, randomVector(rand.New(rand.NewPCG(seed, 7))))
	}
	return out, nil
}

func randomVector(r *rand.Rand) []float32 {
	v := make([]float32, benchDims)
	var n float64
	for i := range v {
		v[i] = float32(r.NormFloat64())
		n += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

var benchWords = []string{"sushi", "tea", "deploy", "friday", "editor", "vim", "lisbon", "cat", "meeting", "budget", "report", "garden", "python", "travel", "invoice", "music"}

// benchStore returns a store holding one user's n items with vectors (written straight into the
// store, a thousand per transaction), on SQLite in a file or PostgreSQL.
func benchStore(b *testing.B, driver string, n int) store.Store {
	b.Helper()
	var st store.Store
	var err error
	var file, dsn string
	switch driver {
	case "sqlite":
		file = filepath.Join(b.TempDir(), "bench.db")
		st, err = sqlite.Open(b.Context(), file)
	case "postgres":
		if !pgtest.Enabled() {
			b.Skip("CARRYON_TEST_POSTGRES_URL is not set")
		}
		dsn = pgtest.NewDatabase(b)
		st, err = postgres.Open(b.Context(), dsn)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	ctx := context.Background()
	if err := st.Write(ctx, func(_ context.Context, tx store.Tx) error {
		return tx.InsertUser(ctx, &carryon.User{ID: "usr_bench", Name: "bench", CreatedAt: time.Unix(1, 0).UTC()})
	}); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	now := time.Now().UTC().Truncate(time.Microsecond)
	for start := 0; start < n; start += 1000 {
		if err := st.Write(ctx, func(_ context.Context, tx store.Tx) error {
			for i := start; i < min(start+1000, n); i++ {
				// Two words of a small vocabulary, four of a large one (w0 … w4999): a query's
				// words match a few hundred items at 100k, not one in sixteen.
				text := fmt.Sprintf("%s %s w%d w%d w%d w%d note %d", benchWords[r.IntN(len(benchWords))], benchWords[r.IntN(len(benchWords))],
					r.IntN(5000), r.IntN(5000), r.IntN(5000), r.IntN(5000), i)
				v, _ := json.Marshal(text)
				it := &carryon.LongTermItem{Namespace: "notes", Key: fmt.Sprintf("k%06d", i), Value: v, Text: text, Version: 1, CreatedAt: now, UpdatedAt: now}
				if err := tx.PutLongTermItem(ctx, "usr_bench", it); err != nil {
					return err
				}
				if _, err := tx.SetLongTermVector(ctx, "usr_bench", "notes", it.Key, 1, store.Vector{Model: "bench", Values: randomVector(r)}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	logStorage(b, file, dsn, n)
	return st
}

// logStorage logs the bytes an item takes in the store: the SQLite file and its WAL, or the
// memories table of PostgreSQL with its indexes and TOAST (after analysing it).
func logStorage(b testing.TB, file, dsn string, n int) {
	var size int64
	if file != "" {
		for _, f := range []string{file, file + "-wal"} {
			if fi, err := os.Stat(f); err == nil {
				size += fi.Size()
			}
		}
	} else {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close(context.Background())
		// The statistics autovacuum would take after so many inserts, at once: without them the
		// planner takes the owner for a few hundred rows and reads all of them (6 to 28 ms at
		// 100k for a keyword search that the full-text index answers in 0.2 ms).
		if _, err := conn.Exec(context.Background(), `ANALYZE memories`); err != nil {
			b.Fatal(err)
		}
		if err := conn.QueryRow(context.Background(), `SELECT pg_total_relation_size('memories')`).Scan(&size); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("storage: %d bytes for %d items, %d bytes an item", size, n, size/int64(n))
}

func benchService(st store.Store) *longterm.Service {
	return longterm.New(st, nil).WithEmbeddings(&longterm.Embeddings{Embedder: randomEmbedder{}, Model: "bench", Dimensions: benchDims, CacheBytes: 1 << 30})
}

// BenchmarkSearch: one user's search at 1k, 10k and 100k items, by mode, on both stores, with
// the user's vectors in the instance's cache (after the first search). p50 and p99 are reported
// beside ns/op.
func BenchmarkSearch(b *testing.B) {
	for _, driver := range []string{"sqlite", "postgres"} {
		for _, n := range []int{1000, 10000, 100000} {
			if n == 100000 && os.Getenv("CARRYON_BENCH_LARGE") == "" {
				continue // ten minutes of set-up: CARRYON_BENCH_LARGE=1 runs it
			}
			b.Run(fmt.Sprintf("%s/items=%d", driver, n), func(b *testing.B) {
				st := benchStore(b, driver, n)
				svc := benchService(st)
				ctx := as("usr_bench")
				for _, mode := range []carryon.SearchMode{carryon.SearchKeyword, carryon.SearchSemantic, carryon.SearchHybrid} {
					b.Run(string(mode), func(b *testing.B) {
						q := carryon.LongTermSearch{Query: "what did I say about w17 and w4242", Mode: mode}
						if _, err := svc.Search(ctx, q); err != nil { // fills the cache
							b.Fatal(err)
						}
						var times []time.Duration
						cpu0, _ := bench.SelfCPU(ctx)
						for b.Loop() {
							start := time.Now()
							if _, err := svc.Search(ctx, q); err != nil {
								b.Fatal(err)
							}
							times = append(times, time.Since(start))
						}
						reportPercentiles(b, times)
						reportCPU(b, cpu0)
					})
				}
				b.Run("cold", func(b *testing.B) { // a new instance: the vectors read from the store
					for b.Loop() {
						if _, err := benchService(st).Search(ctx, carryon.LongTermSearch{Query: "sushi", Mode: carryon.SearchSemantic}); err != nil {
							b.Fatal(err)
						}
					}
				})
			})
		}
	}
}

// reportCPU reports the processor time this process spent an operation since cpu0 (its own
// searches, and the work of other goroutines meanwhile: not a database server's).
func reportCPU(b *testing.B, cpu0 time.Duration) {
	if cpu, err := bench.SelfCPU(context.Background()); err == nil && b.N > 0 {
		b.ReportMetric(float64(cpu-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
	}
}

func reportPercentiles(b *testing.B, times []time.Duration) {
	if len(times) == 0 {
		return
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkWrite: a put under a key (no consolidation) against an add that first looks for a
// near duplicate among the namespace's items, at 10k items, on both stores.
func BenchmarkWrite(b *testing.B) {
	for _, driver := range []string{"sqlite", "postgres"} {
		b.Run(driver, func(b *testing.B) {
			st := benchStore(b, driver, 10000)
			svc := benchService(st)
			ctx := as("usr_bench")
			if _, err := svc.Search(ctx, carryon.LongTermSearch{Query: "x", Mode: carryon.SearchSemantic}); err != nil {
				b.Fatal(err)
			}
			b.Run("put", func(b *testing.B) {
				i := 0
				for b.Loop() {
					i++
					text := fmt.Sprintf("put fact number %d", i)
					v, _ := json.Marshal(text)
					if _, err := svc.Put(ctx, "notes", fmt.Sprintf("p%d", i), carryon.LongTermPut{Value: v, Text: text}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("add-consolidating", func(b *testing.B) {
				i := 0
				for b.Loop() {
					i++
					if _, err := svc.Add(ctx, "notes", carryon.LongTermAdd{Text: fmt.Sprintf("added fact number %d", i)}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
