package longterm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/bench"
)

// unit returns v scaled to length 1.
func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

func gaussian(r *rand.Rand, dims int, sigma float64, around []float32) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(r.NormFloat64() * sigma)
		if around != nil {
			v[i] += around[i]
		}
	}
	return unit(v)
}

// testSet is a set of n rows of dims for the prefilter's tests, and queries for it: random
// (rows and queries uniform on the sphere: the worst case of a prefilter, nothing stands out),
// or clustered (rows around topics, a tenth of them near duplicates of another row; queries near
// a topic or near a row).
func testSet(seed uint64, kind string, n, dims, queries int) (*vectorSet, [][]float32) {
	r := rand.New(rand.NewPCG(seed, 11))
	v := &vectorSet{owner: "usr_a", model: "m", dims: dims}
	var qs [][]float32
	switch kind {
	case "random":
		for i := range n {
			v.add("notes", fmt.Sprintf("k%d", i), nil, gaussian(r, dims, 1, nil))
		}
		for range queries {
			qs = append(qs, gaussian(r, dims, 1, nil))
		}
	case "clustered":
		topics := make([][]float32, 300)
		for i := range topics {
			topics[i] = gaussian(r, dims, 1, nil)
		}
		for i := range n {
			var row []float32
			if i > 0 && i%10 == 0 {
				prev := v.mat[(i-1)*dims : i*dims]
				row = gaussian(r, dims, 0.15/math.Sqrt(float64(dims)), prev) // a near duplicate
			} else {
				row = gaussian(r, dims, (0.6+r.Float64())/math.Sqrt(float64(dims)), topics[r.IntN(len(topics))])
			}
			v.add("notes", fmt.Sprintf("k%d", i), nil, row)
		}
		for j := range queries {
			if j%2 == 0 {
				qs = append(qs, gaussian(r, dims, 1.2/math.Sqrt(float64(dims)), topics[r.IntN(len(topics))]))
			} else {
				i := r.IntN(n)
				qs = append(qs, gaussian(r, dims, 0.8/math.Sqrt(float64(dims)), v.mat[i*dims:(i+1)*dims]))
			}
		}
	}
	return v, qs
}

// exactTop is the exact k best rows of every query.
func exactTop(v *vectorSet, qs [][]float32, k int) [][]hit {
	var out [][]hit
	for _, q := range qs {
		out = append(out, best(v.scores(q), nil, k, nil))
	}
	return out
}

// recall is the mean share of the exact k best rows (exact) that got is among.
func recall(qs [][]float32, exact [][]hit, got func(q []float32) []hit) float64 {
	var sum float64
	for j, q := range qs {
		want := map[int]bool{}
		for _, h := range exact[j] {
			want[h.i] = true
		}
		k := len(exact[j])
		found := 0
		for _, h := range got(q) {
			if want[h.i] {
				found++
			}
		}
		sum += float64(found) / float64(k)
	}
	return sum / float64(len(qs))
}

// TestPrefilterRecallTable prints recall@10 and @50 and the time of a search by candidates, at
// 100k rows of 384 dimensions (CARRYON_PREFILTER_TABLE=1; docs/BENCHMARKS.md quotes it).
func TestPrefilterRecallTable(t *testing.T) {
	if os.Getenv("CARRYON_PREFILTER_TABLE") == "" {
		t.Skip("CARRYON_PREFILTER_TABLE is not set")
	}
	for _, kind := range []string{"random", "clustered"} {
		v, qs := testSet(3, kind, 100000, 384, 100)
		start := time.Now()
		for _, q := range qs {
			v.top(q, 10, "", false, time.Now())
		}
		t.Logf("%s: top(10) as configured: %.2f ms a search", kind, float64(time.Since(start).Microseconds())/1000/float64(len(qs)))
		start = time.Now()
		for _, q := range qs {
			best(v.scores(q), nil, 10, nil)
		}
		t.Logf("%s: exact: %.2f ms a search", kind, float64(time.Since(start).Microseconds())/1000/float64(len(qs)))
		exact := map[int][][]hit{10: exactTop(v, qs, 10), 50: exactTop(v, qs, 50)}
		for _, c := range []int{1000, 2000, 4096, 6144, 8192} {
			for _, k := range []int{10, 50} {
				rc := recall(qs, exact[k], func(q []float32) []hit { return v.prefiltered(q, k, c, nil) })
				t.Logf("%s: candidates %d: recall@%d %.4f", kind, c, k, rc)
			}
		}
	}
}

// reportCPU reports the processor time this process spent an operation since cpu0.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	if cpu, err := bench.SelfCPU(b.Context()); err == nil && b.N > 0 {
		b.ReportMetric(float64(cpu-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
	}
}

// BenchmarkPrefilterParts: the prefilter's steps against exact scoring, at 100k rows of 384.
func BenchmarkPrefilterParts(b *testing.B) {
	v, qs := testSet(3, "random", 100000, 384, 1)
	q := qs[0]
	now := time.Now()
	b.Run("exact-top10", func(b *testing.B) {
		cpu0, _ := bench.SelfCPU(b.Context())
		for b.Loop() {
			best(v.scores(q), nil, 10, nil)
		}
		reportCPU(b, cpu0)
	})
	b.Run("prefiltered-top10", func(b *testing.B) {
		cpu0, _ := bench.SelfCPU(b.Context())
		for b.Loop() {
			v.top(q, 10, "", false, now)
		}
		reportCPU(b, cpu0)
	})
	b.Run("exact-scores", func(b *testing.B) {
		for b.Loop() {
			v.scores(q)
		}
	})
	b.Run("estimates", func(b *testing.B) {
		for b.Loop() {
			v.estimates(q)
		}
	})
	est, lo, hi := v.estimatesRange(q)
	b.Run("candidates", func(b *testing.B) {
		for b.Loop() {
			bestEstimated(est, lo, hi, prefilterMin, nil)
		}
	})
	hits := bestEstimated(est, lo, hi, prefilterMin, nil)
	b.Run("rescore", func(b *testing.B) {
		for b.Loop() {
			v.rescore(q, hits)
		}
	})
}

// TestPrefilterExactBelowThreshold: a set of fewer than prefilterRows rows is scored exactly:
// every search answers the exact k best, in order.
func TestPrefilterExactBelowThreshold(t *testing.T) {
	t.Parallel()
	v, qs := testSet(5, "random", prefilterRows-1, 384, 20)
	for _, k := range []int{1, 10, 1001} {
		if c := candidates(k, prefilterRows-1); c != prefilterRows-1 {
			t.Fatalf("candidates of %d below the threshold: %d", k, c)
		}
	}
	if c := candidates(10, 100000); c != prefilterMin || candidates(10, prefilterRows) >= prefilterRows {
		t.Fatalf("candidates of 10 at 100,000 rows: %d", c)
	}
	for j, q := range qs {
		got, want := v.top(q, 10, "", false, time.Now()), best(v.scores(q), nil, 10, nil)
		for r := range want {
			if got[r] != want[r] {
				t.Fatalf("query %d rank %d: %+v, exact %+v", j, r, got[r], want[r])
			}
		}
	}
}

// TestPrefilterRecall: above the threshold, on random and clustered rows, a search finds at
// least 99% of the exact 10 best with their exact scores, best first; and the estimate alone
// ranks well (the best 1,000 of 30,000 by estimate hold most of the exact 10 best, where 1,000
// rows taken at random would hold 3%).
func TestPrefilterRecall(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"random", "clustered"} {
		v, qs := testSet(7, kind, 30000, 384, 40)
		if candidates(10, 30000) >= 30000 {
			t.Fatal("30,000 rows are not prefiltered")
		}
		exact := exactTop(v, qs, 10)
		now := time.Now()
		if r := recall(qs, exact, func(q []float32) []hit { return v.top(q, 10, "", false, now) }); r < 0.99 {
			t.Errorf("%s: recall@10 %.3f", kind, r)
		}
		if r := recall(qs, exact, func(q []float32) []hit { return v.prefiltered(q, 10, 1000, nil) }); r < 0.85 {
			t.Errorf("%s: recall@10 of the best 1,000 estimates %.3f", kind, r)
		}
		for _, q := range qs[:5] {
			hits := v.top(q, 10, "", false, now)
			for r, h := range hits {
				if s := dot(q, v.mat[h.i*v.dims:(h.i+1)*v.dims]); math.Abs(float64(s-h.score)) > 1e-5 || r > 0 && h.score > hits[r-1].score {
					t.Fatalf("%s: rank %d: score %v, exact %v (previous %v)", kind, r, h.score, s, hits[max(r-1, 0)].score)
				}
			}
		}
	}
}

// TestPrefilterFilters: above the threshold, a search of a small namespace answers its exact
// best (the prefilter keeps only rows that pass), an expired row is never answered even when it
// is the query itself, and an exact-namespace search (consolidation's) finds a planted near
// duplicate among 30,000 rows.
func TestPrefilterFilters(t *testing.T) {
	t.Parallel()
	v, qs := testSet(9, "random", 30000, 384, 1)
	q := qs[0]
	r := rand.New(rand.NewPCG(1, 1))
	for i := range 50 {
		v.add("rare", fmt.Sprintf("r%d", i), nil, gaussian(r, 384, 1, nil))
	}
	past := time.Now().Add(-time.Hour)
	v.add("notes", "expired", &past, q)
	dup := gaussian(r, 384, 0.2/math.Sqrt(384), q) // similarity about 0.98
	v.add("facts", "dup", nil, dup)
	for i := range 20 {
		v.add("facts", fmt.Sprintf("f%d", i), nil, gaussian(r, 384, 1, nil))
	}
	now := time.Now()
	hits := v.top(q, 5, "rare", true, now)
	if len(hits) != 5 {
		t.Fatalf("rare: %d hits", len(hits))
	}
	var want []float32
	for i := 30000; i < 30050; i++ {
		want = append(want, dot(q, v.mat[i*384:(i+1)*384]))
	}
	exact := best(want, nil, 5, nil)
	for j, h := range hits {
		if h.i != 30000+exact[j].i || v.ns[h.i] != "rare" {
			t.Fatalf("rare rank %d: row %d (%s), exact row %d", j, h.i, v.ns[h.i], 30000+exact[j].i)
		}
	}
	for _, h := range v.top(q, 50, "", false, now) {
		if v.keys[h.i] == "expired" {
			t.Fatal("an expired row was answered")
		}
	}
	if h := v.top(dup, 1, "facts", true, now); len(h) != 1 || v.keys[h[0].i] != "dup" || h[0].score < 0.999 {
		t.Fatalf("near duplicate: %+v", h)
	}
	if h := v.top(q, 1, "facts", true, now); len(h) != 1 || v.keys[h[0].i] != "dup" || h[0].score < 0.95 {
		t.Fatalf("near duplicate of the query: %+v", h)
	}
}

// TestPrefilterPatch: a set patched by a write (apply) keeps every row's code, so that the
// prefilter finds a row written after the set was read and never a row deleted since.
func TestPrefilterPatch(t *testing.T) {
	t.Parallel()
	v, qs := testSet(13, "random", 25000, 384, 1)
	v.gen = 1
	c := newVectorCache(1 << 30)
	c.put(v)
	q := qs[0]
	top := v.top(q, 1, "", false, time.Now())[0]
	c.apply("usr_a", "m", 1, 2, []change{{ns: "notes", key: v.keys[top.i]}, {ns: "notes", key: "new", vec: q}})
	n := c.byOwn["usr_a"]
	if len(n.bits) != len(n.keys)*n.words || len(n.l1) != len(n.keys) {
		t.Fatalf("codes of %d rows: %d words, %d norms", len(n.keys), len(n.bits), len(n.l1))
	}
	hits := n.top(q, 2, "", false, time.Now())
	if n.keys[hits[0].i] != "new" || n.keys[hits[1].i] == v.keys[top.i] {
		t.Fatalf("after the patch: %s, %s (deleted %s)", n.keys[hits[0].i], n.keys[hits[1].i], v.keys[top.i])
	}
}
